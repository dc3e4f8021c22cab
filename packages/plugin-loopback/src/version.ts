/** The plugin ID (and so its file name in `host_volume_plugin_dir`) and the version fingerprint reports. */
export const PLUGIN_NAME = 'dhv-loopback';
export const PLUGIN_VERSION = '0.1.0';
