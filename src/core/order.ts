// One order for strings wherever output is sorted: by UTF-16 code units, Array.prototype.sort's
// default. Never localeCompare: its order follows the process's ICU locale (two replicas could
// disagree), and its first call loads ICU's collation tables (~5 MiB more RSS for good).
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
