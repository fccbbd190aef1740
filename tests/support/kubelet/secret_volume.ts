/**
 * A Secret volume on disk, updated the way the kubelet updates one: each version of the files goes into a new
 * hidden directory `..<timestamp>`, a `..data_tmp` symlink to it is renamed over `..data` (one atomic step), every
 * visible file is a symlink `name -> ..data/name` that never changes, and the old version's directory is removed.
 *
 * @module
 */

let versions = 0;

/** Writes `files` as the Secret volume's new version in `dir` (created when missing). */
export async function writeSecretVolume(dir: string, files: Record<string, string>): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  let previous: string | undefined;
  try {
    previous = await Deno.readLink(`${dir}/..data`);
  } catch { /* the first version */ }
  const version = `..${new Date().toISOString().replace(/[-:.]/g, "_")}.${++versions}`;
  await Deno.mkdir(`${dir}/${version}`);
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(`${dir}/${version}/${name}`, text);
  await Deno.symlink(version, `${dir}/..data_tmp`);
  await Deno.rename(`${dir}/..data_tmp`, `${dir}/..data`);
  for (const name of Object.keys(files)) {
    try {
      await Deno.lstat(`${dir}/${name}`);
    } catch {
      await Deno.symlink(`..data/${name}`, `${dir}/${name}`);
    }
  }
  if (previous) await Deno.remove(`${dir}/${previous}`, { recursive: true });
}
