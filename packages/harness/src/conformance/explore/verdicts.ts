/** The explorer's checks, each one part of the model of what Nomad needs. */
export const EXPLORE_CHECK_IDS = [
  'explore.volumes-survive',
  'explore.volumes-distinct',
  'explore.calls-succeed',
  'explore.fingerprint-fast',
  'explore.releases-host-resources',
  'explore.nothing-left',
] as const;
export type ExploreCheckId = (typeof EXPLORE_CHECK_IDS)[number];

/** The only cosmetic one: a leak. Every other break loses, mixes or blocks data, or hides the plugin. */
export const RECOMMENDED_EXPLORE_CHECK: ExploreCheckId = 'explore.nothing-left';
