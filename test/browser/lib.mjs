// lib.mjs: what a person sees, as assertions for the browser test.

/** Checks collects failures; a failure does not stop the run. */
export class Checks {
  constructor() {
    this.failures = [];
  }
  fail(msg) {
    this.failures.push(msg);
    console.error("FAIL: " + msg);
  }
  check(ok, msg) {
    if (!ok) this.fail(msg);
    return ok;
  }
}

/**
 * seen reports whether the element of locator is visible to a person: it
 * exists, its computed style shows it (display, visibility, opacity along
 * the ancestors), it is not in a closed <details>, the browser's
 * checkVisibility() agrees, it has a size, and its box lies inside the
 * viewport horizontally and starts inside it vertically.
 */
export async function seen(page, locator) {
  if ((await locator.count()) === 0) return { ok: false, why: "not in the page" };
  const el = locator.first();
  const info = await el.evaluate((node) => {
    for (let n = node; n && n.nodeType === 1; n = n.parentElement) {
      const cs = getComputedStyle(n);
      if (cs.display === "none") return { hidden: "display:none on " + n.tagName + (n.id ? "#" + n.id : "") };
      if (cs.visibility === "hidden") return { hidden: "visibility:hidden on " + n.tagName };
      if (Number(cs.opacity) === 0) return { hidden: "opacity:0 on " + n.tagName };
    }
    // The content of a closed <details> is skipped (content-visibility),
    // though its boxes may keep a size.
    for (let d = node.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) {
      const summary = d.querySelector(":scope > summary");
      if (!d.open && !(summary && summary.contains(node))) return { hidden: "inside a closed details" };
    }
    if (!node.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true })) return { hidden: "checkVisibility() is false" };
    const r = node.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height, vw: innerWidth, vh: innerHeight };
  });
  if (info.hidden) return { ok: false, why: info.hidden };
  if (info.w < 1 || info.h < 1) return { ok: false, why: "zero size " + JSON.stringify(info) };
  if (info.x < -1 || info.x + info.w > info.vw + 1) return { ok: false, why: "outside the viewport horizontally " + JSON.stringify(info) };
  if (info.y < -1 || info.y >= info.vh) return { ok: false, why: "outside the viewport vertically " + JSON.stringify(info) };
  return { ok: true, why: "" };
}

/** expectSeen fails unless locator is visible to a person. */
export async function expectSeen(c, page, locator, what) {
  const s = await seen(page, locator);
  c.check(s.ok, what + " is not visible: " + s.why);
  return s.ok;
}

/** expectUnseen fails if locator is visible to a person. */
export async function expectUnseen(c, page, locator, what) {
  const s = await seen(page, locator);
  c.check(!s.ok, what + " is visible but should not be");
}

/** noOverflow fails when the page scrolls sideways (something wider than the viewport). */
export async function noOverflow(c, page, where) {
  const m = await page.evaluate(() => {
    const wide = [];
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > innerWidth + 1 && getComputedStyle(el).position !== "fixed") wide.push(el.tagName + (el.className ? "." + String(el.className).split(" ")[0] : ""));
    }
    return { sw: document.scrollingElement.scrollWidth, iw: innerWidth, wide: wide.slice(0, 5) };
  });
  c.check(m.sw <= m.iw, `${where}: the page is wider than the viewport (scrollWidth ${m.sw} > ${m.iw}; ${m.wide.join(", ")})`);
}

/** until polls fn until it returns a truthy value, or times out with msg. */
export async function until(fn, msg, timeout = 15000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("timed out: " + msg + (last instanceof Error ? " (" + last.message + ")" : ""));
}

/** waitSeen waits for locator to be visible; a timeout is a failure, not an exception, so the run goes on. */
export async function waitSeen(c, locator, what, timeout = 10000) {
  try {
    await locator.waitFor({ timeout });
    return true;
  } catch (e) {
    c.fail(what + " did not appear: " + String(e.message).split("\n")[0]);
    return false;
  }
}
