import { goPrint, goTypeName as goType } from '../fmt.js';
import { ExecFailure, TemplateError, lineOf } from './errors.js';
import { callBuiltin, truthy } from './funcs.js';
import type { Command, Node, Operand, Pipeline } from './parse.js';

export class Renderer {
  constructor(private readonly template: string) {}

  render(nodes: readonly Node[], dot: unknown, out: string[]): void {
    for (const node of nodes) {
      if (node.kind === 'text') out.push(node.text);
      else if (node.kind === 'action') out.push(goPrint(this.pipeline(node.pipe, dot)));
      else if (node.kind === 'if') {
        this.render(truthy(this.pipeline(node.pipe, dot)) ? node.body : node.otherwise, dot, out);
      } else if (node.kind === 'with') {
        const value = this.pipeline(node.pipe, dot);
        if (truthy(value)) this.render(node.body, value, out);
        else this.render(node.otherwise, dot, out);
      } else {
        const value = this.pipeline(node.pipe, dot);
        const items = Array.isArray(value)
          ? value
          : value && typeof value === 'object'
            ? Object.keys(value)
                .sort()
                .map((k) => (value as Record<string, unknown>)[k])
            : [];
        if (items.length === 0) this.render(node.otherwise, dot, out);
        else for (const item of items) this.render(node.body, item, out);
      }
    }
  }

  private pipeline(pipe: Pipeline, dot: unknown): unknown {
    let piped: { value: unknown } | undefined;
    for (const command of pipe) piped = { value: this.command(command, dot, piped) };
    return piped?.value;
  }

  private command(command: Command, dot: unknown, piped: { value: unknown } | undefined): unknown {
    const first = command.operands[0]!;
    const rest = command.operands.slice(1);
    try {
      if (first.kind === 'func') {
        const args = rest.map((o) => this.operand(o, dot, command));
        if (piped) args.push(piped.value);
        return callBuiltin(first.name, args);
      }
      if (rest.length > 0 || piped) throw new ExecFailure(`can't give argument to non-function ${describe(first)}`);
      return this.operand(first, dot, command);
    } catch (err) {
      if (err instanceof ExecFailure) throw this.failure(command, err.message);
      throw err;
    }
  }

  private operand(operand: Operand, dot: unknown, command: Command): unknown {
    switch (operand.kind) {
      case 'const':
        return operand.value;
      case 'field':
        return lookup(dot, operand.path);
      case 'pipe':
        return lookup(this.pipeline(operand.pipe, dot), operand.path);
      case 'func':
        // A function as an argument is called with no arguments, as in Go.
        try {
          return callBuiltin(operand.name, []);
        } catch (err) {
          if (err instanceof ExecFailure) throw this.failure(command, err.message);
          throw err;
        }
    }
  }

  private failure(command: Command, message: string): TemplateError {
    const before = this.template.slice(0, command.pos);
    const newline = before.lastIndexOf('\n');
    const col = newline === -1 ? command.pos : command.pos - newline - 1;
    const context = command.source.length > 20 ? `${command.source.slice(0, 20)}...` : command.source;
    return new TemplateError(
      `template: :${lineOf(this.template, command.pos)}:${col}: executing "" at <${context}>: ${message}`,
      'TEMPLATE_FAILED',
    );
  }
}

function describe(operand: Operand): string {
  return operand.kind === 'field'
    ? `.${operand.path.join('.')}`
    : operand.kind === 'const'
      ? goPrint(operand.value)
      : '';
}

function lookup(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ExecFailure(`can't evaluate field ${key} in type ${goType(value)}`);
    }
    if (!Object.hasOwn(value, key)) throw new ExecFailure(`can't evaluate field ${key}`);
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
