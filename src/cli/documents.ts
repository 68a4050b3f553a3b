// Reads the documents of YAML or JSON files (multi-document YAML allowed), remembering where each
// came from so that every message can name the file and the document.
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';

export interface Document {
  /** `file` or `file[2]` (0-based) when the file holds several documents. */
  where: string;
  value: unknown;
}

export function readDocuments(file: string): Document[] {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  const values = yaml.loadAll(text).filter((v) => v !== null && v !== undefined);
  return values.map((value, i) => ({ where: values.length > 1 ? `${file}[${i}]` : file, value }));
}
