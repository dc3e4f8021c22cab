import { describe, expect, it } from 'vitest';
import { FAIL_AT_VARIABLE, parseFaultPoint } from './fault-injection.js';

describe(`${FAIL_AT_VARIABLE}, as a plugin process reads it`, () => {
  it.each([
    ['step:3', { step: 3 }],
    ['step:attach the image', { step: 'attach the image' }],
    ['tool:1', { tool: 1 }],
    ['tool:losetup', { tool: 'losetup' }],
    ['step:a:b', { step: 'a:b' }],
  ])('reads %s', (text, point) => {
    expect(parseFaultPoint(text)).toEqual(point);
  });

  it.each(['losetup', 'step:', 'step:0', 'tools:1', 'STEP:1', ' step:1'])('refuses %j, naming the forms', (text) => {
    expect(() => parseFaultPoint(text)).toThrow(
      `${FAIL_AT_VARIABLE}=${JSON.stringify(text)} names no fault point; use step:<n>, step:<name>, tool:<n> or tool:<name> (n counts from 1)`,
    );
  });
});
