/**
 * Host operations, one home for the plugins, the agent, the conformance suite and the
 * tests: signals to processes and groups, the mount table, loop devices by backing file,
 * teardown, a simulated reboot, and the record of which disk a plugin's volumes dir was on.
 */
export {
  MOUNTINFO,
  canonicalFolder,
  canonicalPath,
  describeMount,
  identityOf,
  isRecordedMount,
  sameFilesystem,
  deepestFirst,
  entriesAt,
  entriesAtOrBelow,
  entriesBelow,
  mountsAt,
  mountsAtOrBelow,
  mountsBelow,
  parseMountinfo,
  readMountTable,
  readMountTableSync,
  unescapeMountField,
  type MountEntry,
  type MountIdentity,
} from './mount-table.js';
export {
  attachedLoopDevices,
  attachedLoopDevicesSync,
  deviceNumberOf,
  loopDevicesBackedBelow,
  loopDevicesBackedBy,
  type LoopDevice,
} from './loop-devices.js';
export { formatDeviceNumber } from '../helpers/device-number.js';
export {
  NotAProcessError,
  isProcessId,
  isRunningProcess,
  processExists,
  processGroupExists,
  processStartTicks,
  signalProcess,
  signalProcessGroup,
  signalRecordedGroup,
  stoppedRunning,
} from '../helpers/signals.js';
export { atOrBelow, inScope, teardownScope, type TeardownScope } from './scope.js';
export {
  HostError,
  detachLoopDevice,
  releaseEverythingBelow,
  simulateReboot,
  unmount,
  type RebootReport,
  type RebootTargets,
  type TeardownOptions,
} from './teardown.js';
export { CleanupJournal, cleanupJournalDir, finishOrphanedJournals, releaseJournalOnCrash } from './cleanup-journal.js';
export {
  expectVolumesDisk,
  keepVolumesDisk,
  forgetVolumesDisk,
  pluginStateDir,
  volumesDiskFolder,
  volumesDiskFoldersBelow,
  type VolumesDisk,
  type VolumesDiskCheck,
} from './volumes-disk.js';
