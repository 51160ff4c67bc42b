import { crawlKeyOf } from "../../src/crawler/crawl-jobs";
import { queueSchemaOf, schedulerIdOf } from "../../src/crawler/queues";

describe("job and scheduler ids", () => {
  it("never carry a colon, whatever the source is called", () => {
    expect(schedulerIdOf("sim-master")).toBe("sweep-sim-master");
    expect(schedulerIdOf("My Master [::1]:27011")).toBe("sweep-my-master-1-27011");
    expect(crawlKeyOf("My Master [::1]:27011", 42)).toBe("my-master-1-27011-42");
    expect(crawlKeyOf("x:y", 1)).not.toContain(":");
  });
});

describe("the queue schema on PostgreSQL", () => {
  it("is the queue prefix plus _queue, as a plain identifier", () => {
    expect(queueSchemaOf("gsindex")).toBe("gsindex_queue");
    expect(queueSchemaOf("gsindex-demo")).toBe("gsindex_demo_queue");
    expect(queueSchemaOf("Bench_42")).toBe("bench_42_queue");
  });
});
