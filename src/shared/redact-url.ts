/** A connection URL fit for a log line or an error message: the password (and a user's secret) replaced by ***. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return "(an unparsable URL)";
  }
}
