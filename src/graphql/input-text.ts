/**
 * Text the database cannot hold is the client's mistake, found before anything runs: a NUL character
 * (PostgreSQL text has none: the statement would fail as an internal error, logged with a stack, at the
 * client's will) or a lone UTF-16 surrogate (not Unicode: it would be stored as U+FFFD). Every string
 * argument is checked, in the query text and in the variables, so no resolver has to remember to.
 */
import { Kind, visit, type DocumentNode, type ValueNode } from "graphql";
import { BadUserInputError } from "./errors";

// A lone surrogate: `u` mode matches a surrogate code unit only when it is not half of a pair.
const LONE_SURROGATE = /\p{Cs}/u;

function problemWith(text: string): string | null {
  if (text.includes("\u0000")) return "contains a NUL character (U+0000), which text cannot hold";
  if (LONE_SURROGATE.test(text)) return "is not valid Unicode text (it holds a lone surrogate)";
  return null;
}

function refuse(path: string, problem: string): never {
  throw new BadUserInputError(path, problem, { beforeExecution: true });
}

/** Strings inside a literal argument value; iterative, as deep as the client nests it. */
function checkLiteral(value: ValueNode, path: string): void {
  const stack: Array<[ValueNode, string]> = [[value, path]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, at] = item;
    if (node.kind === Kind.STRING) {
      const problem = problemWith(node.value);
      if (problem) refuse(at, problem);
    } else if (node.kind === Kind.LIST) {
      node.values.forEach((v, i) => stack.push([v, `${at}[${i}]`]));
    } else if (node.kind === Kind.OBJECT) {
      for (const field of node.fields) stack.push([field.value, `${at}.${field.name.value}`]);
    }
  }
}

/** Strings inside the JSON variables (`$f.tagsAll[1]`). */
function checkVariables(variables: Readonly<Record<string, unknown>>): void {
  const stack: Array<[unknown, string]> = Object.entries(variables).map(([name, v]) => [
    v,
    `$${name}`,
  ]);
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [value, at] = item;
    if (typeof value === "string") {
      const problem = problemWith(value);
      if (problem) refuse(at, problem);
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, `${at}[${i}]`]));
    } else if (typeof value === "object" && value !== null) {
      for (const [key, v] of Object.entries(value)) stack.push([v, `${at}.${key}`]);
    }
  }
}

/** Throws BAD_USER_INPUT (HTTP 400) naming the first argument or variable whose text is not valid. */
export function assertValidText(
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | undefined,
): void {
  visit(document, {
    Argument(node) {
      checkLiteral(node.value, node.name.value);
    },
    VariableDefinition(node) {
      if (node.defaultValue) checkLiteral(node.defaultValue, `$${node.variable.name.value}`);
    },
  });
  if (variables) checkVariables(variables);
}
