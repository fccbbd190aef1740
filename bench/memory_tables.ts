/**
 * The memory benchmark's tables (Markdown): the stages as the kernel sees them, the cost of one more Node and one more
 * Service from the stages' slopes, the controller's structures by retained size, and the heap by kind.
 *
 * @module
 */
import type { HeapAnalysis } from "./heap_snapshot.ts";
import type { Figures, HeapFigures } from "./memory_runs.ts";

/** What one stage measured: the release run, and the heap run unless it was skipped. */
export interface StageResult {
  nodes: number;
  services: number;
  syncSeconds?: number;
  release: Figures;
  heap?: HeapFigures;
}

const mib = (kib: number) => (kib / 1024).toFixed(1);
const kibOf = (bytes: number) => (bytes / 1024).toFixed(0);

/**
 * The cost of one more Node and one more Service of `value` (per stage), from the stages' slopes: per Node from the
 * two stages with the same Services and the most Nodes apart, per Service from the two stages the most Services apart
 * (less the Nodes they differ by). Undefined where the stages cannot tell.
 */
export function slopes(
  stages: readonly StageResult[],
  value: (stage: StageResult) => number | undefined,
): { perNode?: number; perService?: number } {
  let perNode: number | undefined;
  let nodeSpan = 0;
  let serviceSpan: [StageResult, StageResult] | undefined;
  for (const a of stages) {
    for (const b of stages) {
      const va = value(a), vb = value(b);
      if (va === undefined || vb === undefined) continue;
      if (a.services === b.services && b.nodes - a.nodes > nodeSpan) {
        nodeSpan = b.nodes - a.nodes;
        perNode = (vb - va) / nodeSpan;
      }
      const span = b.services - a.services;
      if (span > 0 && (!serviceSpan || span > serviceSpan[1].services - serviceSpan[0].services)) serviceSpan = [a, b];
    }
  }
  if (!serviceSpan || perNode === undefined) return { perNode };
  const [a, b] = serviceSpan;
  const perService = (value(b)! - value(a)! - perNode * (b.nodes - a.nodes)) / (b.services - a.services);
  return { perNode, perService };
}

/** The stages as the kernel sees them (MiB), and the heap used after a forced collection (heap run). */
export function stagesTable(stages: readonly StageResult[]): string[] {
  return [
    "| nodes | services | list+sync s | VmRSS MiB | VmHWM MiB | RssAnon MiB | RssFile MiB | RssAnon: malloc heap / " +
    "binary / other MiB | JS heap after GC MiB |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...stages.map((s) => {
      const r = s.release;
      const heap = s.heap ? (s.heap.heapUsed / 1048576).toFixed(1) : "—";
      return `| ${s.nodes} | ${s.services} | ${s.syncSeconds ?? "?"} | ${mib(r.VmRSS)} | ${mib(r.VmHWM)} | ${
        mib(r.RssAnon)
      } | ${mib(r.RssFile)} | ${mib(r.mallocHeap)} / ${mib(r.fileAnon)} / ${mib(r.otherAnon)} | ${heap} |`;
    }),
  ];
}

/** One more Node, one more Service: KiB of RssAnon, VmRSS and JS heap after a collection, from the slopes. */
export function objectCostTable(stages: readonly StageResult[]): string[] {
  const figure = (n: number | undefined) => n === undefined ? "—" : n.toFixed(2);
  const rss = slopes(stages, (s) => s.release.RssAnon);
  const vm = slopes(stages, (s) => s.release.VmRSS);
  const malloc = slopes(stages, (s) => s.release.mallocHeap);
  const heap = slopes(stages, (s) => s.heap && s.heap.heapUsed / 1024);
  return [
    "| one more | RssAnon KiB | of it malloc heap KiB | VmRSS KiB | JS heap after GC KiB |",
    "| --- | --- | --- | --- | --- |",
    `| Node | ${figure(rss.perNode)} | ${figure(malloc.perNode)} | ${figure(vm.perNode)} | ${figure(heap.perNode)} |`,
    `| Service | ${figure(rss.perService)} | ${figure(malloc.perService)} | ${figure(vm.perService)} | ${
      figure(heap.perService)
    } |`,
  ];
}

/**
 * Each instance's row name: its class and label (`WorkQueue service`); instances of a class without labels that has
 * several (the stores) are told apart by the instance that holds them (`Store of Informer nodes`).
 */
function rowNames(analysis: HeapAnalysis): string[] {
  const own = analysis.instances.map((i) => i.label ? `${i.className} ${i.label}` : i.className);
  const unlabelled = new Map<string, number>();
  for (const i of analysis.instances) if (!i.label) unlabelled.set(i.className, (unlabelled.get(i.className) ?? 0) + 1);
  return analysis.instances.map((i, index) =>
    !i.label && unlabelled.get(i.className)! > 1 && i.owner !== undefined
      ? `${own[index]} of ${own[i.owner]}`
      : own[index]
  );
}

/** Bytes by row (instances and their fields) of one analysis; instances of one row name add up. */
function structureRows(analysis: HeapAnalysis): Map<string, number> {
  const rows = new Map<string, number>();
  const names = rowNames(analysis);
  analysis.instances.forEach((instance, index) => {
    const name = names[index];
    rows.set(name, (rows.get(name) ?? 0) + instance.retained);
    for (const [field, bytes] of instance.fields) {
      const key = `${name} · ${field}`;
      rows.set(key, (rows.get(key) ?? 0) + bytes);
    }
  });
  return rows;
}

/**
 * The controller's structures by retained size (KiB) at each stage with a heap run, and per Node and per Service
 * (bytes, from the slopes): every instance of `STRUCTURES` and each field it alone keeps, where one reaches `minKiB`
 * at some stage.
 */
export function structuresTable(stages: readonly StageResult[], minKiB = 4): string[] {
  const measured = stages.filter((s) => s.heap);
  if (measured.length === 0) return [];
  const perStage = measured.map((s) => structureRows(s.heap!.analysis));
  const names = [...new Set(perStage.flatMap((rows) => [...rows.keys()]))].filter((name) =>
    perStage.some((rows) => (rows.get(name) ?? 0) >= minKiB * 1024)
  ).sort();
  const header = measured.map((s) => `${s.nodes} + ${s.services}`);
  const lines = [
    `| structure (retained KiB) | ${header.join(" | ")} | per Node B | per Service B |`,
    `| --- | ${header.map(() => "---").join(" | ")} | --- | --- |`,
  ];
  for (const name of names) {
    const values = perStage.map((rows) => rows.get(name) ?? 0);
    const cost = slopes(measured, (s) => values[measured.indexOf(s)]);
    const per = (n: number | undefined) => n === undefined ? "—" : n.toFixed(0);
    lines.push(`| ${name} | ${values.map(kibOf).join(" | ")} | ${per(cost.perNode)} | ${per(cost.perService)} |`);
  }
  return lines;
}

/** The heap by kind (class name, or `(string)`, `(code)`, …): the `top` largest at the last stage, KiB at each. */
export function kindsTable(stages: readonly StageResult[], top = 15): string[] {
  const measured = stages.filter((s) => s.heap);
  if (measured.length === 0) return [];
  const last = measured[measured.length - 1].heap!.analysis.byKind;
  const kinds = [...last.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top).map(([kind]) => kind);
  const header = measured.map((s) => `${s.nodes} + ${s.services}`);
  return [
    `| kind (KiB / count) | ${header.join(" | ")} |`,
    `| --- | ${header.map(() => "---").join(" | ")} |`,
    ...kinds.map((kind) =>
      `| ${kind.replaceAll("|", "\\|")} | ${
        measured.map((s) => {
          const entry = s.heap!.analysis.byKind.get(kind);
          return entry ? `${kibOf(entry.bytes)} / ${entry.count}` : "0";
        }).join(" | ")
      } |`
    ),
  ];
}
