// axe.mjs: the accessibility check (axe-core) run in each view at each size.
// axe-core is installed next to playwright-core (scripts/install-test-
// tools.sh); its source is evaluated through the DevTools protocol
// (page.evaluate), which the page's strict CSP (script-src 'self') does not
// govern, so production's CSP needs no bypass.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire((process.env.NODE_PATH || ".") + "/");
const source = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/**
 * axeCheck runs axe-core on the page as it is and fails on any violation of
 * impact serious or critical (rule, impact, help, the first targets); it
 * prints one line per view with the counts by impact.
 */
export async function axeCheck(c, page, view) {
  const has = await page.evaluate(() => typeof window.axe === "object").catch(() => false);
  if (!has) await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")), n: v.nodes.length }));
  });
  const counts = { critical: 0, serious: 0, moderate: 0, minor: 0 };
  for (const v of violations) counts[v.impact] = (counts[v.impact] || 0) + v.n;
  const rules = violations.map((v) => `${v.id}(${v.impact})`).join(" ");
  console.log(`axe: ${view}: critical ${counts.critical}, serious ${counts.serious}, moderate ${counts.moderate}, minor ${counts.minor}${rules ? " - " + rules : ""}`);
  for (const v of violations) {
    if (v.impact === "serious" || v.impact === "critical") {
      c.fail(`${view}: axe ${v.id} (${v.impact}): ${v.help}; ${v.n} element(s), e.g. ${v.targets.join(" | ")}`);
    }
  }
}
