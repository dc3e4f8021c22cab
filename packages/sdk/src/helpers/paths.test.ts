import { describe, expect, it } from 'vitest';
import { expectCreatedPath, isStrictlyInside, volumePath } from './paths.js';
import { PluginFailure } from './errors.js';

const ID = '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99';

describe('volumePath', () => {
  it('is <volumes dir>/<volume id>', () => {
    expect(volumePath('/srv/volumes', ID)).toBe(`/srv/volumes/${ID}`);
    expect(volumePath('/srv/volumes/', ID)).toBe(`/srv/volumes/${ID}`);
    expect(volumePath('/srv//volumes/./', ID)).toBe(`/srv/volumes/${ID}`);
    expect(volumePath('/', ID)).toBe(`/${ID}`);
  });

  it.each(['..', '../../etc', `${ID}/../..`, `../${ID}`, '/etc', '', 'data'])(
    'refuses the volume ID %j before touching the disk',
    (id) => {
      expect(() => volumePath('/srv/volumes', id)).toThrow(PluginFailure);
      try {
        volumePath('/srv/volumes', id);
      } catch (err) {
        expect((err as PluginFailure).code).toBe('EUNSAFEPATH');
      }
    },
  );

  it('refuses a relative volumes dir', () => {
    expect(() => volumePath('srv/volumes', ID)).toThrow(/absolute/);
  });
});

describe('expectCreatedPath', () => {
  it('accepts the path create makes, or no path at all', () => {
    expect(() => expectCreatedPath(`/srv/volumes/${ID}`, `/srv/volumes/${ID}`)).not.toThrow();
    expect(() => expectCreatedPath(`/srv/volumes/${ID}/`, `/srv/volumes/${ID}`)).not.toThrow();
    expect(() => expectCreatedPath('', `/srv/volumes/${ID}`)).not.toThrow();
  });

  it('refuses any other path, so delete never removes something else', () => {
    expect(() => expectCreatedPath('/', `/srv/volumes/${ID}`)).toThrow(/refusing to delete/);
    expect(() => expectCreatedPath(`/srv/volumes/${ID}/../..`, `/srv/volumes/${ID}`)).toThrow(PluginFailure);
  });
});

describe('isStrictlyInside', () => {
  it.each([
    ['/a', '/a/b', true],
    ['/a', '/a/b/c', true],
    ['/a', '/a', false],
    ['/a', '/ab', false],
    ['/a', '/a/../b', false],
    ['/a', '/a/..b', true],
    ['/', '/x', true],
  ])('%s contains %s: %s', (parent, child, expected) => {
    expect(isStrictlyInside(parent, child)).toBe(expected);
  });
});
