export { makeListFleet as makeListTestFleet } from "../../src/simulator/list-fleet";
