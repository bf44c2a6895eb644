//! How the studio reaches its data folder, as the backend last said: through the
//! `mcpflow service` that owns it (`connected`, with its pid), `reconnecting` to one after
//! the connection was lost, or holding the store itself (`in_process`). Kept up to date by
//! `app/service.ts`; shown by `app/ServiceIndicator`, and Run / Debug wait while it reconnects.

import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { ServiceStatus } from './client';

export interface ServiceConnection {
  /** What the backend last said; null until it has said anything. */
  status: ServiceStatus | null;
  /** Why it is not known (the backend could not be asked). */
  problem: string | null;
}

export const serviceStore = createStore<ServiceConnection>()(() => ({ status: null, problem: null }));

export function useService<T>(selector: (s: ServiceConnection) => T): T {
  return useStore(serviceStore, selector);
}

/** True while the connection to the service is lost (the backend reconnects). */
export const reconnecting = (s: ServiceConnection): boolean => s.status?.state === 'reconnecting';
