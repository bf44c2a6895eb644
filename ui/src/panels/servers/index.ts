//! Servers: the servers panel (dialog), the consent prompt, signing in (OAuth), and the
//! shared servers store.

export { ConsentDialog } from './ConsentDialog';
export { NEW_SERVER_CONFIG, parseServerConfig, ServerEditor } from './ServerEditor';
export { ServersPanel } from './ServersPanel';
export { SamplingSettingsSection } from './SamplingSettings';
export { TelemetrySettingsSection } from './TelemetrySettings';
export { checkProviderForm, formOf, providerSummary, variableName, type ProviderForm } from './sampling';
export { EraBadge, RunSignIn, ServerAuthLine } from './ServerAuth';
export { cancelSignIn, refreshLogins, signIn, signOut } from './auth';
export { AUTH_REQUIRED, authServer, expiryText } from './authtext';
export {
  approveConsent,
  cancelConsent,
  closeServersPanel,
  deleteServer,
  importServersFile,
  needsConsent,
  openSamplingSettings,
  openTelemetrySettings,
  openServersPanel,
  putServer,
  refreshAll,
  refreshOffers,
  refreshSampling,
  refreshServers,
  refreshTelemetry,
  requestConsent,
  requestRunConsent,
  initialServersState,
  saveSamplingProvider,
  saveTelemetry,
  serversStore,
  setServerSampling,
  testOrAsk,
  testServer,
  useServers,
  type AuthSlice,
  type Consent,
  type SignIn,
  type ServersState,
  type TestState,
} from './store';
