import { describe, expect, it } from "vitest";
import { ClusterUrlError, parseClusterUrl } from "../../../src/store/cluster-url.js";

describe("parseClusterUrl", () => {
  it("leaves a one-host URL without target_session_attrs to node-postgres", () => {
    expect(parseClusterUrl("postgres://u:p@127.0.0.1:5432/writ")).toBeNull();
    expect(parseClusterUrl("postgres://u:p@127.0.0.1:5432/writ?sslmode=disable")).toBeNull();
  });

  it("reads the hosts in order, the wanted session kind, and one-host URLs keeping the other parameters", () => {
    const c = parseClusterUrl("postgres://u:p%40ss@127.0.0.1:5432,db2:5433/writ?sslmode=disable&target_session_attrs=read-write");
    expect(c?.hosts).toEqual([
      { host: "127.0.0.1", port: 5432 },
      { host: "db2", port: 5433 },
    ]);
    expect(c?.attrs).toBe("read-write");
    expect(c?.urlFor(0)).toBe("postgres://u:p%40ss@127.0.0.1:5432/writ?sslmode=disable");
    expect(c?.urlFor(1)).toBe("postgres://u:p%40ss@db2:5433/writ?sslmode=disable");
  });

  it("reads bracketed IPv6 hosts, and gives a host without a port the next port given", () => {
    const c = parseClusterUrl("postgresql://[::1]:6000,127.0.0.1,localhost:6001/x");
    expect(c?.hosts).toEqual([
      { host: "::1", port: 6000 },
      { host: "127.0.0.1", port: 6001 },
      { host: "localhost", port: 6001 },
    ]);
    expect(c?.attrs).toBe("any");
    expect(c?.urlFor(0)).toBe("postgresql://[::1]:6000/x");
  });

  it("reads one host with target_session_attrs as a cluster of one", () => {
    const c = parseClusterUrl("postgres://u@h:1/d?target_session_attrs=standby");
    expect(c?.hosts).toEqual([{ host: "h", port: 1 }]);
    expect(c?.attrs).toBe("standby");
    expect(c?.urlFor(0)).toBe("postgres://u@h:1/d");
  });

  it("refuses an unknown target_session_attrs and a malformed host list", () => {
    expect(() => parseClusterUrl("postgres://h1:1,h2:2/d?target_session_attrs=leader")).toThrow(ClusterUrlError);
    expect(() => parseClusterUrl("postgres://h1:1,,h2:2/d")).toThrow(ClusterUrlError);
    expect(() => parseClusterUrl("postgres://h1:1,h2:99999/d")).toThrow(/out of range/);
  });
});
