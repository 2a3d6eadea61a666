// PostGraphile 5 serving the benchmark database beside the service, for
// `make bench` (tests/bench/postgraphile.go starts it): the amber preset as
// shipped, the public schema, a pool the size of the service's, no GraphiQL,
// no explain. It has no access layer: every request is anonymous.
import { makePgService } from "postgraphile/adaptors/pg";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [
    makePgService({
      connectionString: process.env.DATABASE_URL,
      schemas: ["public"],
      poolConfig: { max: Number(process.env.POOL_SIZE || 16) },
    }),
  ],
  grafserv: {
    host: "127.0.0.1",
    port: Number(process.env.PORT),
    graphiql: false,
  },
  grafast: { explain: false },
};

export default preset;
