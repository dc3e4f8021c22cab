import { describe, expect, it } from 'vitest';
import { columns, keyValues, localTimestamp } from './columns.js';

describe("Nomad's CLI layouts", () => {
  it('aligns key = value lines and shows empty values as <none>', () => {
    expect(
      keyValues([
        ['ID', 'abc'],
        ['Host Path', ''],
        ['Plugin ID', 'mkdir'],
      ]),
    ).toBe('ID        = abc\nHost Path = <none>\nPlugin ID = mkdir');
  });

  it('pads columns by two spaces without trailing blanks', () => {
    expect(
      columns(
        ['ID', 'Name', 'State'],
        [
          ['1e1d4540', 'test', 'ready'],
          ['2b2b2b2b', 'a-longer-name', 'unavailable'],
        ],
      ),
    ).toBe('ID        Name           State\n1e1d4540  test           ready\n2b2b2b2b  a-longer-name  unavailable');
  });

  it('prints a local RFC 3339 time with its offset, as nomad volume create does', () => {
    expect(localTimestamp(new Date('2024-12-05T22:06:46Z'))).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/,
    );
  });
});
