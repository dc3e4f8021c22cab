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
export { shellQuote } from '../helpers/shell-quote.js';
export { dropLoopMountCopies, type LoopCopiesToDrop } from './namespace-copies.js';
export { replaceFile, replaceFileSync, PARTIAL_PREFIX, partialFileWriter } from '../helpers/replace-file.js';
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
  STATE_DIR_VARIABLE,
  volumesDiskFolder,
  volumesDiskFoldersBelow,
  type VolumesDisk,
  type VolumesDiskCheck,
} from './volumes-disk.js';
export {
  checkHost,
  hasLoopSupport,
  HOST_TOOL_PACKAGES,
  type HostCallOptions,
  type HostNeeds,
  type HostTool,
} from './host-tools.js';
export {
  attachLoopDevice,
  detachLoopDevicesOfImage,
  loopDeviceNumbered,
  loopDevicesOfDeletedImage,
  loopDevicesOfImage,
  refreshLoopCapacity,
} from './loop-setup.js';
export {
  NAMESPACE_SETUP_GRACE_MS,
  VolumeBusyError,
  deviceReleased,
  lastingMountsInOtherNamespaces,
  mount,
  mountsElsewhere,
  remount,
  unmount,
  type ForeignMount,
} from './mounts.js';
export {
  FILESYSTEMS,
  checkFilesystem,
  detectFilesystem,
  growFilesystem,
  makeFilesystem,
  type FilesystemType,
  type MountedFilesystem,
} from './filesystems.js';
export { checkRoom, createSparseImage, imageSize, preallocate, removeFile, resizeImage } from './images.js';
export { readStateFile, updateStateFile, type StateFileOptions } from './state-file.js';
