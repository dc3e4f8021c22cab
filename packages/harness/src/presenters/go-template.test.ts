import { describe, expect, it } from 'vitest';
import { renderGoTemplate, TemplateError } from './go-template.js';

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

  it('refuses functions, variables and pipelines, naming the action', () => {
    for (const t of ['{{printf "%s" .ID}}', '{{$x := .ID}}', '{{.ID | len}}', '{{index . 0}}']) {
      expect(() => renderGoTemplate(t, volumes)).toThrow(TemplateError);
    }
    expect(() => renderGoTemplate('{{printf "%s" .ID}}', volumes)).toThrow(/\{\{printf "%s" \.ID\}\} is not supported/);
    expect(() => renderGoTemplate('{{range .}}', volumes)).toThrow(/unexpected EOF/);
    expect(() => renderGoTemplate('{{.Nope}}', volumes[0])).toThrow(/can't evaluate field Nope/);
  });
});
