// Finds promises whose rejection nothing handles, with TypeScript's own type checker (the rules of
// typescript-eslint's no-floating-promises and no-misused-promises, without adding eslint):
//   - a statement that is a promise (`fetch();`), or `void` of one, unless it ends in `.catch(f)`
//     or `.then(f, g)` (one stored in a variable is judged where it is used);
//   - an async function (or one returning a promise) passed where the callee expects a function
//     returning void, e.g. an event listener or a timer callback: whoever calls it drops the promise.
import ts from 'typescript';

export interface Finding {
  file: string;
  line: number;
  text: string;
  rule: 'floating' | 'misused';
}

export function findFloatingPromises(program: ts.Program, include: (fileName: string) => boolean): Finding[] {
  const checker = program.getTypeChecker();
  const findings: Finding[] = [];
  for (const source of program.getSourceFiles()) {
    if (source.isDeclarationFile || !include(source.fileName)) continue;
    const report = (node: ts.Node, rule: Finding['rule']) => {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      findings.push({ file: source.fileName, line: line + 1, text: node.getText(source).split('\n')[0]!.slice(0, 120), rule });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isExpressionStatement(node) && isUnhandled(checker, node.expression)) report(node, 'floating');
      if (ts.isVoidExpression(node) && isUnhandled(checker, node.expression)) report(node, 'floating');
      if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && returnsPromiseWhereVoidExpected(checker, node))
        report(node, 'misused');
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return findings;
}

/**
 * A real Promise: only those report an unhandled rejection. Other thenables (Fastify's reply) do
 * nothing until someone calls their `then`.
 */
function isPromise(checker: ts.TypeChecker, type: ts.Type): boolean {
  if (type.isUnion()) return type.types.some((t) => isPromise(checker, t));
  return type.getSymbol()?.getName() === 'Promise';
}

function isUnhandled(checker: ts.TypeChecker, expression: ts.Expression): boolean {
  const inner = skipParens(expression);
  if (ts.isAwaitExpression(inner) || ts.isVoidExpression(inner)) return false;
  // Stored for later (`pending = work()`): where it is used is where it must be handled.
  if (ts.isBinaryExpression(inner) && inner.operatorToken.kind === ts.SyntaxKind.EqualsToken) return false;
  if (!isPromise(checker, checker.getTypeAtLocation(inner))) return false;
  return !handled(inner);
}

/** `.catch(f)`, or `.then(f, g)`: a rejection handler at the end of the chain. */
function handled(expression: ts.Expression): boolean {
  if (!ts.isCallExpression(expression) || !ts.isPropertyAccessExpression(expression.expression)) return false;
  const method = expression.expression.name.text;
  return (method === 'catch' && expression.arguments.length >= 1) || (method === 'then' && expression.arguments.length >= 2);
}

function returnsPromiseWhereVoidExpected(checker: ts.TypeChecker, fn: ts.ArrowFunction | ts.FunctionExpression): boolean {
  const signature = checker.getSignatureFromDeclaration(fn);
  if (!signature || !isPromise(checker, checker.getReturnTypeOfSignature(signature))) return false;
  const contextual = checker.getContextualType(fn);
  if (!contextual) return false;
  const expected = contextual.getCallSignatures();
  return expected.length > 0 && expected.every((s) => (checker.getReturnTypeOfSignature(s).flags & ts.TypeFlags.Void) !== 0);
}

function skipParens(expression: ts.Expression): ts.Expression {
  return ts.isParenthesizedExpression(expression) ? skipParens(expression.expression) : expression;
}
