//! Servers: the servers panel (dialog), the consent prompt, and the shared servers store.

export { ConsentDialog } from './ConsentDialog';
export { NEW_SERVER_CONFIG, parseServerConfig, ServerEditor } from './ServerEditor';
export { ServersPanel } from './ServersPanel';
export {
  approveConsent,
  cancelConsent,
  closeServersPanel,
  deleteServer,
  importServersFile,
  needsConsent,
  openServersPanel,
  putServer,
  refreshAll,
  refreshOffers,
  refreshServers,
  requestConsent,
  requestRunConsent,
  initialServersState,
  serversStore,
  testOrAsk,
  testServer,
  useServers,
  type Consent,
  type ServersState,
  type TestState,
} from './store';
