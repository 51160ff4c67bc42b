/**
 * Query limits, without a dependency.
 *
 * Document limits (tokens, fields, aliases) are checked on the query text in front of Apollo, before
 * graphql-js validation, whose cost grows with the square of the fields sharing a name (its
 * OverlappingFieldsCanBeMerged rule): an 11,000-field document would cost seconds of event loop to
 * validate. Lexing stops one token past the cap, so an oversized document costs no more than a
 * capped one.
 *
 * Depth and complexity limits. Both are checked once the operation and its
 * variables are known (a page size given as `$first` must count), after graphql-js validation and
 * before anything runs; both errors carry code QUERY_TOO_COMPLEX (a validation rule's error would be
 * re-coded GRAPHQL_VALIDATION_FAILED by Apollo).
 *
 * Cost model: every field costs 1, or its `complexity` extension (type-graphql's `@Field({ complexity })`)
 * when it has one; a field with `first`/`last` multiplies the cost of what it selects by that page size
 * (a list field without them by `defaultListSize`, except a connection's edges/nodes, already counted). Introspection (`__schema`, `__type`) is free and has no
 * depth, so Apollo Sandbox and codegen tools keep working under tight limits.
 */
import {
  getArgumentValues,
  Lexer,
  parse,
  Source,
  TokenKind,
  getNamedType,
  getNullableType,
  GraphQLList,
  isCompositeType,
  isObjectType,
  isInterfaceType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import { QueryTooComplexError } from "./errors";

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
  /** Multiplier for a list field that has no `first`/`last` argument. */
  defaultListSize: number;
}

type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;

function selectionDepth(
  set: SelectionSetNode | undefined,
  fragments: Fragments,
  seen: Set<string>,
): number {
  if (!set) return 0;
  let max = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.name.value.startsWith("__")) continue;
      max = Math.max(
        max,
        sel.selectionSet ? 1 + selectionDepth(sel.selectionSet, fragments, seen) : 1,
      );
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      max = Math.max(max, selectionDepth(sel.selectionSet, fragments, seen));
    } else {
      const name = sel.name.value;
      const fragment = fragments.get(name);
      if (!fragment || seen.has(name)) continue; // unknown or cyclic: other rules report it
      seen.add(name);
      max = Math.max(max, selectionDepth(fragment.selectionSet, fragments, seen));
      seen.delete(name);
    }
  }
  return max;
}

/** How many fields deep the operation nests (introspection fields excluded). */
export function operationDepth(operation: OperationDefinitionNode, fragments: Fragments): number {
  return selectionDepth(operation.selectionSet, fragments, new Set());
}

/** Throws QUERY_TOO_COMPLEX when the operation nests deeper than `maxDepth` fields. */
export function assertDepth(
  operation: OperationDefinitionNode,
  fragments: Fragments,
  maxDepth: number,
): void {
  const depth = operationDepth(operation, fragments);
  if (depth > maxDepth)
    throw new QueryTooComplexError(`query depth ${depth} exceeds the limit of ${maxDepth}`, {
      depth,
      maxDepth,
    });
}

function ownCost(extensions: Readonly<Record<string, unknown>> | null | undefined): number {
  const value = extensions?.["complexity"];
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 1;
}

function pageMultiplier(
  parentName: string,
  args: Record<string, unknown>,
  isList: boolean,
  limits: QueryLimits,
): number {
  const first = args["first"];
  const last = args["last"];
  const sizes = [first, last].filter((v): v is number => typeof v === "number" && v >= 0);
  if (sizes.length > 0) return Math.max(...sizes);
  // A connection's edges/nodes are as many as the connection field's own first/last, counted there.
  if (parentName.endsWith("Connection")) return 1;
  return isList ? limits.defaultListSize : 1;
}

/** The estimated cost of an operation under the cost model above, with its variables applied. */
export function operationComplexity(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Fragments,
  variables: Record<string, unknown>,
  limits: QueryLimits,
): number {
  const root = schema.getRootType(operation.operation);
  if (!root) return 0;
  const visit = (
    set: SelectionSetNode,
    parent: GraphQLCompositeType,
    seen: Set<string>,
  ): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value.startsWith("__")) continue;
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const def = parent.getFields()[sel.name.value];
        if (!def) continue;
        let args: Record<string, unknown> = {};
        try {
          args = getArgumentValues(def, sel, variables);
        } catch {
          // invalid arguments: execution reports them with a proper error
        }
        const named = getNamedType(def.type);
        const isList = getNullableType(def.type) instanceof GraphQLList;
        let cost = ownCost(def.extensions);
        if (sel.selectionSet && isCompositeType(named)) {
          cost +=
            pageMultiplier(parent.name, args, isList, limits) *
            visit(sel.selectionSet, named, seen);
        }
        total += cost;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const cond = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        if (cond && isCompositeType(cond)) total += visit(sel.selectionSet, cond, seen);
      } else {
        const name = sel.name.value;
        const fragment = fragments.get(name);
        if (!fragment || seen.has(name)) continue;
        const cond = schema.getType(fragment.typeCondition.name.value);
        if (!cond || !isCompositeType(cond)) continue;
        seen.add(name);
        total += visit(fragment.selectionSet, cond, seen);
        seen.delete(name);
      }
    }
    return total;
  };
  return visit(operation.selectionSet, root, new Set());
}

/** Throws QUERY_TOO_COMPLEX when the operation's cost is over the limit; returns the cost otherwise. */
export function assertComplexity(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Fragments,
  variables: Record<string, unknown>,
  limits: QueryLimits,
): number {
  const complexity = operationComplexity(schema, operation, fragments, variables, limits);
  if (complexity > limits.maxComplexity) {
    throw new QueryTooComplexError(
      `query complexity ${complexity} exceeds the limit of ${limits.maxComplexity}; ask for smaller pages or fewer fields`,
      {
        complexity,
        maxComplexity: limits.maxComplexity,
      },
    );
  }
  return complexity;
}

export interface DocumentLimits {
  maxTokens: number;
  /** Field selections as written (a fragment's fields count once, however often it is spread). */
  maxFields: number;
  maxAliases: number;
}

/** Lexical tokens up to `stopAfter + 1`; null when the text does not lex (Apollo reports that syntax error). */
function countTokens(source: string, stopAfter: number): number | null {
  const lexer = new Lexer(new Source(source));
  let n = 0;
  try {
    while (lexer.advance().kind !== TokenKind.EOF && n <= stopAfter) n++;
  } catch {
    return null;
  }
  return n;
}

/**
 * Throws QUERY_TOO_COMPLEX when the query text is over a document limit. A text that does not parse
 * passes: Apollo parses it again and reports the syntax error as usual.
 */
export function assertDocumentLimits(source: string, limits: DocumentLimits): void {
  const tokens = countTokens(source, limits.maxTokens);
  if (tokens === null) return;
  if (tokens > limits.maxTokens) {
    throw new QueryTooComplexError(`the query has more than ${limits.maxTokens} tokens`, {
      maxTokens: limits.maxTokens,
    });
  }
  let document;
  try {
    document = parse(source, { noLocation: true, maxTokens: limits.maxTokens });
  } catch {
    return;
  }
  let fields = 0;
  let aliases = 0;
  // Iterative: the nesting is as deep as the client likes, within the token cap.
  const sets: SelectionSetNode[] = [];
  for (const def of document.definitions)
    if ("selectionSet" in def && def.selectionSet) sets.push(def.selectionSet);
  for (let set = sets.pop(); set; set = sets.pop()) {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        fields++;
        if (sel.alias) aliases++;
      }
      if (sel.kind !== Kind.FRAGMENT_SPREAD && sel.selectionSet) sets.push(sel.selectionSet);
    }
  }
  if (aliases > limits.maxAliases) {
    throw new QueryTooComplexError(
      `the query has ${aliases} aliases, more than the limit of ${limits.maxAliases}`,
      { aliases, maxAliases: limits.maxAliases },
    );
  }
  if (fields > limits.maxFields) {
    throw new QueryTooComplexError(
      `the query selects ${fields} fields, more than the limit of ${limits.maxFields}`,
      { fields, maxFields: limits.maxFields },
    );
  }
}
