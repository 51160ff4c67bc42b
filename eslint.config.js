// Lint: typescript-eslint's recommended rules, floating promises (essential in workers), and the layering
// rules of docs/code-layout.md: src/protocol stands alone behind its index; src/crawler never imports src/graphql.
const tseslint = require("typescript-eslint");

// src/protocol/index.ts is the protocol library's public entry: code outside src/protocol imports from it,
// never from a module inside. From src/ the library is '../protocol'; from test/ and bench/, '../src/protocol'
// (test/ has a test/protocol of its own, whose helpers other tests may import).
const protocolBoundary = (dir) => ({
  group: [`**/${dir}/*`, `**/${dir}/*/**`, `!**/${dir}/index`],
  message:
    "Import the protocol library from src/protocol (its index); export from src/protocol/index.ts what is missing.",
});
const PROTOCOL_BOUNDARY_SRC = protocolBoundary("protocol");
const PROTOCOL_BOUNDARY_TEST = protocolBoundary("src/protocol");

module.exports = tseslint.config(
  { ignores: ["dist/**", "src/generated/**", "node_modules/**", "coverage/**", "**/*.js"] },
  ...tseslint.configs.recommended,
  {
    files: ["src/**/*.ts", "test/**/*.ts", "bench/**/*.ts"],
    ignores: ["src/web/client/**"],
    languageOptions: {
      parserOptions: { project: "./tsconfig.check.json", tsconfigRootDir: __dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/no-require-imports": "off",
    },
  },
  {
    // Browser code (the web pages): its own tsconfig (DOM, JSX), the same rules.
    files: ["src/web/client/**/*.ts", "src/web/client/**/*.tsx"],
    languageOptions: {
      parserOptions: { project: "./src/web/client/tsconfig.json", tsconfigRootDir: __dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  {
    files: ["src/protocol/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            "**/crawler/**",
            "**/graphql/**",
            "**/generated/**",
            "**/shared/**",
            "**/cli/**",
            "@prisma/*",
            "bullmq",
            "ioredis",
            "graphql",
            "type-graphql",
            "pino",
          ],
        },
      ],
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "env",
          message: "src/protocol takes options, not the environment",
        },
      ],
    },
  },
  {
    // The library boundary. Flat config: a later block that sets no-restricted-imports for the same files
    // replaces this one, so the blocks below repeat PROTOCOL_BOUNDARY_SRC in their own lists.
    files: ["src/**/*.ts", "src/**/*.tsx"],
    ignores: ["src/protocol/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [PROTOCOL_BOUNDARY_SRC] }] },
  },
  {
    // Exception: test/protocol unit-tests the library's internals and may import a module the index does
    // not export (a codec's helpers, the packet reader), rather than widen the public API for tests only.
    // What the index does export, it imports from the index.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    ignores: ["test/protocol/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [PROTOCOL_BOUNDARY_TEST] }] },
  },
  {
    files: ["src/crawler/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            PROTOCOL_BOUNDARY_SRC,
            { group: ["**/graphql/**", "type-graphql", "@apollo/*"] },
          ],
        },
      ],
    },
  },
  {
    // The history reads: shared by the crawler and the API, so they import neither.
    files: ["src/history/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            PROTOCOL_BOUNDARY_SRC,
            {
              group: [
                "**/crawler/**",
                "**/graphql/**",
                "**/cli/**",
                "**/service/**",
                "type-graphql",
                "@apollo/*",
                "bullmq",
              ],
            },
          ],
        },
      ],
    },
  },
  {
    // What the API may import: src/shared, src/history (the read model), src/protocol, the generated Prisma
    // client, and from src/crawler only the modules named here; never the CLI, the service root, the demo
    // or the simulator.
    files: ["src/graphql/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "**/crawler/**",
                // Admin mutations cancel a disabled source's queued crawls; the context types that hook.
                "!**/crawler/queues",
                // addServer/addSource refuse addresses the crawler would never contact, by the crawler's own rules.
                "!**/crawler/address-policy",
                "!**/crawler/outbound-guard",
              ],
              message:
                "src/graphql reads history through src/history and shares code through src/shared; allow a crawler module here only with a reason.",
            },
            {
              group: ["**/cli/**", "**/service/**", "**/demo/**", "**/simulator/**"],
              message:
                "The service root and the CLI assemble src/graphql; it imports neither them nor the demo or the simulator.",
            },
            PROTOCOL_BOUNDARY_SRC,
          ],
        },
      ],
    },
  },
);
