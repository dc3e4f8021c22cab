import { describe, expect, it } from 'vitest';
import { renderGoTemplate, renderGoTemplateParts, TemplateError } from './text-template/index.js';

const volumes = [
  { ID: 'b', Name: 'two', Parameters: { mode: '0750' }, CapacityBytes: 0 },
  { ID: 'a', Name: 'one', Parameters: null, CapacityBytes: 1024 },
];

describe('the Go template subset of volume status -t', () => {
  it('prints fields, nested fields, string constants and ranges', () => {
    expect(renderGoTemplate('{{range .}}{{.ID}}={{.Name}}:{{.Parameters.mode}}{{"\\n"}}{{end}}', [volumes[0]])).toBe(
      'b=two:0750\n',
    );
    expect(renderGoTemplate('{{range .}}{{.CapacityBytes}} {{end}}', volumes)).toBe('0 1024 ');
  });

  it('takes if/else on empty values as Go does, trims with {{- -}}, and skips comments', () => {
    expect(renderGoTemplate('{{range .}}{{if .Parameters}}p{{else}}-{{end}}{{end}}', volumes)).toBe('p-');
    expect(renderGoTemplate('a  {{- /* note */ -}}  b', {})).toBe('ab');
    expect(renderGoTemplate('{{range .}}x{{else}}none{{end}}', [])).toBe('none');
  });

  it('prints maps and lists as fmt does', () => {
    expect(renderGoTemplate('{{.}}', { b: 1, a: ['x', 'y'] })).toBe('map[a:[x y] b:1]');
    expect(renderGoTemplate('{{.Parameters}}', volumes[1])).toBe('<no value>');
  });

  it('refuses variables, template definitions, the builtins it lacks and sprig_*, naming the action', () => {
    for (const t of [
      '{{$x := .ID}}',
      '{{range $i, $v := .}}{{end}}',
      '{{template "x"}}',
      '{{slice . 1}}',
      '{{sprig_upper .ID}}',
    ]) {
      expect(() => renderGoTemplate(t, volumes), t).toThrow(TemplateError);
    }
    expect(() => renderGoTemplate('{{sprig_upper .ID}}', volumes)).toThrow(
      /\{\{sprig_upper \.ID\}\} is not supported: sprig_upper is not/,
    );
    expect(() => renderGoTemplate('{{nope .ID}}', volumes)).toThrow('template: :1: function "nope" not defined');
    expect(() => renderGoTemplate('{{range .}}', volumes)).toThrow(/unexpected EOF/);
    expect(() => renderGoTemplate('{{.Nope}}', volumes[0])).toThrow(/can't evaluate field Nope/);
  });
});

describe('index, as Go text/template has it', () => {
  const node = { Name: 'web-1', Meta: { rack: 'r1' }, Drivers: ['exec', 'docker'], Ports: [[80, 443]] };

  it('indexes maps by key and slices by position, several indices at once', () => {
    expect(renderGoTemplate('{{index .Meta "rack"}}', node)).toBe('r1');
    expect(renderGoTemplate('{{index .Drivers 1}}', node)).toBe('docker');
    expect(renderGoTemplate('{{index .Ports 0 1}}', node)).toBe('443');
    expect(renderGoTemplate('{{index . 1 "Name"}}', volumes)).toBe('one');
    expect(renderGoTemplate('{{index . 0 "Parameters" "mode"}}', volumes)).toBe('0750');
    expect(renderGoTemplate('{{(index . 0).Name}}', volumes)).toBe('two');
    expect(renderGoTemplate('{{index .Drivers}}', node)).toBe('[exec docker]');
    // A string gives a byte, as in Go.
    expect(renderGoTemplate('{{index .Name 0}}', node)).toBe('119');
  });

  it('gives the zero value for a missing map key: "" in a map of strings, as Nomad\'s Meta and Parameters are', () => {
    expect(renderGoTemplate('[{{index .Meta "nope"}}]', node)).toBe('[]');
    expect(renderGoTemplate('[{{index .Parameters "mode"}}]', volumes[1])).toBe('[]');
    // A key is a key of the map itself, never a member every JavaScript object inherits.
    expect(renderGoTemplate('[{{index .Meta "constructor"}}|{{index .Meta "__proto__"}}]', node)).toBe('[|]');
    expect(() => renderGoTemplate('{{.Meta.toString}}', node)).toThrow("can't evaluate field toString");
    const proto = JSON.parse('{"Parameters": {"__proto__": "x"}}') as unknown;
    expect(renderGoTemplate('{{.Parameters.__proto__}}|{{index .Parameters "__proto__"}}', proto)).toBe('x|x');
  });

  it('writes more text than one JavaScript string holds, as Go writes to its buffer', () => {
    const wide = 'x'.repeat(10_000_000);
    const parts = renderGoTemplateParts(
      '{{range .}}{{.}}{{end}}',
      Array.from({ length: 60 }, () => wide),
    );
    expect(parts.reduce((n, p) => n + p.length, 0)).toBe(600_000_000);
  });

  it("fails with Go's words: where, which command, and why", () => {
    expect(() => renderGoTemplate('ab{{index .Drivers 5}}', node)).toThrow(
      'template: :1:4: executing "" at <index .Drivers 5>: error calling index: index out of range: 5',
    );
    expect(() => renderGoTemplate('{{index .Drivers -1}}', node)).toThrow(
      'error calling index: index out of range: -1',
    );
    expect(() => renderGoTemplate('{{index .Drivers "x"}}', node)).toThrow(
      'error calling index: cannot index slice/array with type string',
    );
    expect(() => renderGoTemplate('{{index .Meta 1}}', node)).toThrow(
      'error calling index: value has type int64; should be string',
    );
    expect(() => renderGoTemplate('{{index .Ports 0 1 2}}', node)).toThrow(
      "error calling index: can't index item of type int64",
    );
    expect(() => renderGoTemplate('{{index nil 0}}', node)).toThrow('error calling index: index of untyped nil');
    expect(() => renderGoTemplate('x\n {{index .Drivers 1 2 3 4 5 6 7}}', node)).toThrow(
      'template: :2:3: executing "" at <index .Drivers 1 2 3...>: error calling index',
    );
  });
});

describe('the other builtins and pipelines Nomad users write in -t', () => {
  it('len, printf, print and println', () => {
    expect(renderGoTemplate('{{len .}}', volumes)).toBe('2');
    expect(renderGoTemplate('{{len (index . 0).Parameters}} {{len "héllo"}}', volumes)).toBe('1 6');
    expect(() => renderGoTemplate('{{len .CapacityBytes}}', volumes[0])).toThrow(
      'error calling len: len of type int64',
    );
    expect(renderGoTemplate('{{range .}}{{printf "%-5s|%6d|%q\\n" .Name .CapacityBytes .ID}}{{end}}', volumes)).toBe(
      'two  |     0|"b"\none  |  1024|"a"\n',
    );
    expect(renderGoTemplate('{{printf "%d %s"  .Name}}', volumes[0])).toBe('%!d(string=two) %!s(MISSING)');
    expect(renderGoTemplate('{{printf "%v" .Parameters}}', volumes[0])).toBe('map[mode:0750]');
    expect(renderGoTemplate('{{print .CapacityBytes 1 "x" 2}}', volumes[0])).toBe('0 1x2');
    expect(renderGoTemplate('{{println .Name .ID}}', volumes[0])).toBe('two b\n');
  });

  it('pipelines, comparisons, and/or/not, else if and with', () => {
    expect(renderGoTemplate('{{.Name | printf "%q"}} {{.Name | len}}', volumes[0])).toBe('"two" 3');
    const kind = '{{range .}}{{if eq .Name "one" "uno"}}1{{else if gt .CapacityBytes 10}}big{{else}}?{{end}},{{end}}';
    expect(renderGoTemplate(kind, volumes)).toBe('?,1,');
    expect(
      renderGoTemplate('{{range .}}{{if and .Parameters (not (lt .CapacityBytes 0))}}p{{end}}{{end}}', volumes),
    ).toBe('p');
    expect(renderGoTemplate('{{range .}}{{or .Parameters "none"}} {{end}}', volumes)).toBe('map[mode:0750] none ');
    expect(renderGoTemplate('{{range .}}{{with .Parameters}}{{.mode}}{{else}}-{{end}}{{end}}', volumes)).toBe('0750-');
    expect(() => renderGoTemplate('{{if eq .Name 1}}{{end}}', volumes[0])).toThrow(
      'error calling eq: incompatible types for comparison',
    );
  });
});
