/**
 * The Marketplace page (editor/vscode/README.md) says what the extension contributes: every
 * command by its title, every keybinding, and the screenshots it shows exist. Its settings table
 * is generated from package.json (tests/unit/test_settings_docs.py checks that one).
 */
// covers P7 (issue 30, item 6: the page never mentioned code anchors, Remember Selection, the
// Facts filter or Delete Session, and lacked six settings)
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url);
const readme = readFileSync(new URL("README.md", root), "utf8");
const manifest = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));

describe("the Marketplace page", () => {
  it("names every contributed command by its title, in bold", () => {
    const titles: string[] = manifest.contributes.commands.map((c: { title: string }) => c.title);
    expect(titles.filter((title) => !readme.includes(`**${title}**`))).toEqual([]);
  });

  it("lists every command in its table", () => {
    const table = readme.slice(readme.indexOf("## Commands"), readme.indexOf("## Settings"));
    const rows = [...table.matchAll(/^\| \*\*(.+?)\*\* \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(manifest.contributes.commands.map((c: { title: string }) => c.title).sort());
  });

  it("says every keybinding", () => {
    for (const binding of manifest.contributes.keybindings as { key: string; mac?: string }[]) {
      const spelled = (key: string) => key.split("+").map((part) => (part === "alt" ? "Alt" : part === "ctrl" ? "Ctrl" : part === "cmd" ? "Cmd" : part.toUpperCase())).join("+");
      expect(readme).toContain(spelled(binding.key));
      if (binding.mac) expect(readme).toContain(spelled(binding.mac));
    }
  });

  it("shows only screenshots that exist", () => {
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]);
    expect(images).toEqual(["media/screenshot-chat.png", "media/screenshot-facts.png", "media/screenshot-drift.png"]);
    expect(images.filter((image) => !existsSync(new URL(image, root)))).toEqual([]);
  });
});
