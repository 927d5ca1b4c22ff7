/** The webview's handle on its host, typed by what this page sends and what it saves with setState. */
export interface VsCodeApi<Out, State> {
  postMessage(message: Out): void;
  getState(): Partial<State> | undefined;
  setState(state: State): void;
}

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };

/**
 * Called once per page (VS Code allows one call). What getState returns was saved by this page's own code, or by
 * an older version of it: every field is read as optional.
 */
export function vscodeApi<Out, State>(): VsCodeApi<Out, State> {
  const api = acquireVsCodeApi();
  return {
    postMessage: (message) => api.postMessage(message),
    getState: () => {
      const saved = api.getState();
      return saved !== null && typeof saved === 'object' ? saved : undefined;
    },
    setState: (state) => api.setState(state),
  };
}
