// The on-premise relay: leases the floating seats of one license over HTTP on a network with no
// internet, and exchanges files with the platform (relay request, relay file, revocation list,
// relay report). See docs/relay.md.
export { runRelayCli } from './relay-cli';
export type { RelayCliIo } from './relay-cli';
export { initRelay, startRelay } from './relay';
export type { RelayRequest, RunningRelay, StartOptions } from './relay';
