/** Unit tests are `*.test.ts`; tests that need PostgreSQL, Redis or a long-running fleet are `*.int.test.ts`. */
const transform = { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.jest.json" }] };
const common = { testEnvironment: "node", transform, moduleFileExtensions: ["ts", "js", "json"] };
module.exports = {
  projects: [
    {
      ...common,
      displayName: "unit",
      testMatch: ["<rootDir>/test/**/*.test.ts"],
      testPathIgnorePatterns: ["\\.int\\.test\\.ts$"],
    },
    { ...common, displayName: "integration", testMatch: ["<rootDir>/test/**/*.int.test.ts"] },
  ],
};
