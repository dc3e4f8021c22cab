/**
 * An error a plugin raises on purpose. Its message reaches the user through the agent
 * (`{"error": ...}`), and its code lets programs and tests tell failures apart.
 */
export class PluginFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'PluginFailure';
  }
}
