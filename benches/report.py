#!/usr/bin/env python3
"""Summarises criterion's results under target/criterion as markdown tables for BENCHMARKS.md.

For every benchmark: the median time per iteration over its samples, the spread as the
interquartile range of the samples (p25-p75), the ratio of its median to the median of the
group's `baseline` (when the group has one) and, for benchmarks with a byte throughput, MB/s
(10^6 bytes per second) at the median. When both `streaming/1KB` and `streaming/1MB` are
present, a last table gives each stream's per-byte cost at 1 MB relative to 1 KB (the ratio of
the MB/s figures; 1.00x is perfectly linear).

Usage: python3 benches/report.py [target/criterion]
"""

import json
import os
import statistics
import sys


def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def quantile(values, q):
    values = sorted(values)
    pos = (len(values) - 1) * q
    low = int(pos)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (pos - low)


def load(root):
    results = {}
    for directory, _, files in os.walk(root):
        if os.path.basename(directory) != "new" or "sample.json" not in files:
            continue
        with open(os.path.join(directory, "benchmark.json")) as f:
            meta = json.load(f)
        with open(os.path.join(directory, "sample.json")) as f:
            sample = json.load(f)
        per_iter = [t / n for t, n in zip(sample["times"], sample["iters"])]
        group = meta["group_id"]
        name = meta["function_id"] or ""
        if meta.get("value_str"):
            name = f"{name}/{meta['value_str']}" if name else meta["value_str"]
        throughput = (meta.get("throughput") or {}).get("Bytes")
        results.setdefault(group, {})[name] = {
            "median": statistics.median(per_iter),
            "p25": quantile(per_iter, 0.25),
            "p75": quantile(per_iter, 0.75),
            "samples": len(per_iter),
            "bytes": throughput,
        }
    return results


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "target/criterion"
    results = load(root)
    for group in sorted(results):
        benches = results[group]
        baseline = benches.get("baseline", {}).get("median")
        print(f"\n#### `{group}`\n")
        print("| benchmark | median | p25 – p75 | samples | ratio to baseline | MB/s |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name in sorted(benches, key=lambda n: (n != "baseline", n)):
            b = benches[name]
            ratio = f"{b['median'] / baseline:.2f}x" if baseline and name != "baseline" else ""
            rate = f"{b['bytes'] / b['median'] * 1e3:.1f}" if b["bytes"] else ""
            print(
                f"| {name} | {fmt_time(b['median'])} | {fmt_time(b['p25'])} – "
                f"{fmt_time(b['p75'])} | {b['samples']} | {ratio} | {rate} |"
            )

    small, large = results.get("streaming/1KB"), results.get("streaming/1MB")
    if small and large:
        print("\n#### per-byte cost, 1 MB / 1 KB\n")
        print("| stream | 1 KB: MB/s | 1 MB: MB/s | per-byte cost 1 MB / 1 KB |")
        print("| --- | ---: | ---: | ---: |")
        for name in sorted(small, key=lambda n: (n != "baseline", n)):
            a, b = small[name], large.get(name)
            if not (b and a["bytes"] and b["bytes"]):
                continue
            rate_small = a["bytes"] / a["median"] * 1e3
            rate_large = b["bytes"] / b["median"] * 1e3
            print(
                f"| {name} | {rate_small:.1f} | {rate_large:.1f} | "
                f"{rate_small / rate_large:.2f}x |"
            )


if __name__ == "__main__":
    main()
