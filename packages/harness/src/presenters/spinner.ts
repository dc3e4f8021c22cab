const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Quick operations print nothing extra: the spinner appears only after this long. */
const DELAY_MS = 400;

/**
 * Runs `work` and shows a spinner on stderr while it takes more than a moment, only when
 * stderr is a terminal, so pipes and logs never see control characters.
 */
export async function withSpinner<T>(
  label: string,
  work: Promise<T>,
  stream: NodeJS.WriteStream = process.stderr,
): Promise<T> {
  if (!stream.isTTY) return work;
  let frame = 0;
  let shown = false;
  let interval: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    shown = true;
    interval = setInterval(() => stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label}`), 80);
  }, DELAY_MS);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
    if (interval) clearInterval(interval);
    if (shown) stream.write('\r\x1b[2K');
  }
}
