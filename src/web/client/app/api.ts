/** The one way the pages read data: a POST to the public GraphQL API of the process that served them. */

export interface GqlError {
  message: string;
  extensions?: { code?: string; retryAfterSeconds?: number };
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export async function gql<T>(
  query: string,
  variables: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<T> {
  const res = await fetch("/graphql", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/graphql-response+json, application/json",
    },
    body: JSON.stringify({ query, variables }),
    signal,
  });
  let body: { data?: T; errors?: GqlError[] };
  try {
    body = (await res.json()) as { data?: T; errors?: GqlError[] };
  } catch {
    throw new ApiError(`The API answered HTTP ${res.status}`, "HTTP");
  }
  const first = body.errors?.[0];
  if (first) throw new ApiError(first.message, first.extensions?.code ?? "ERROR");
  if (!body.data) throw new ApiError(`The API answered HTTP ${res.status} without data`, "HTTP");
  return body.data;
}

/**
 * A server id as a GraphQL literal: ids are opaque to the pages (numeric today), so the literal is
 * written to suit either an Int or an ID argument; anything but letters, digits, '-' and '_' is refused.
 */
export function idLiteral(id: string): string {
  if (!/^[\w-]{1,64}$/.test(id)) throw new ApiError(`'${id}' is not a server id`, "BAD_ID");
  return /^\d+$/.test(id) ? id : JSON.stringify(id);
}
