// theme.ts: the theme preference (Settings → Preferences) applied to the
// page: "light" or "dark" sets the root's data-theme, which fixes its
// color-scheme (style.css picks every colour with light-dark()); "system"
// or the server's default ("") follows the system. Kept in storage so that
// a reload paints in the chosen theme before the preference is read again.

const key = "nexus.theme";

/** applyTheme applies theme to the page and remembers it in storage. */
export function applyTheme(theme: string | undefined, storage: Storage | null): void {
  const t = theme === "light" || theme === "dark" ? theme : "";
  if (t) document.documentElement.dataset.theme = t;
  else delete document.documentElement.dataset.theme;
  try {
    if (t) storage?.setItem(key, t);
    else storage?.removeItem(key);
  } catch {
    // storage full or disabled: the theme lasts as long as the page
  }
}

/** restoreTheme applies the theme remembered in storage, if any. */
export function restoreTheme(storage: Storage | null): void {
  let t: string | null = null;
  try {
    t = storage?.getItem(key) ?? null;
  } catch {
    t = null;
  }
  applyTheme(t ?? "", null);
}
