/** The plugin ID (and so its file name in `host_volume_plugin_dir`) and the version fingerprint reports. */
export const PLUGIN_NAME = 'dhv-mkdir';
// Kept equal to package.json's version by a test; a constant, so fingerprint reads no file.
export const PLUGIN_VERSION = '0.1.0';
