// Screenshots of the main screens, light and dark, 1280×800, with a small wiki of a
// team's runbooks: written to docs/screenshots/<screen>-<theme>.png.
import { mkdirSync } from "node:fs";
import type { Page } from "@playwright/test";
import { createPage, expect, test } from "../fixtures";

// CAIRN_SCREENSHOTS_DIR (with a trailing slash) writes them elsewhere: tests/it/web_app.rs
// takes them in CI into a temporary directory and checks each one.
const OUT = process.env.CAIRN_SCREENSHOTS_DIR || new URL("../../../docs/screenshots/", import.meta.url).pathname;

test.use({ viewport: { width: 1280, height: 800 } });

const DEPLOY = `# Deploying to production

How the platform team ships a release. Read [[On-call handbook]] first if you are new;
when something goes wrong, switch to [[Incident response]].

## Before you start

- [x] The release branch is green in CI
- [x] The changelog is written and reviewed
- [ ] The database migration was rehearsed on staging

## Steps

1. Tag the release and push the tag:

   \`\`\`sh
   git tag -s v2.14.0 -m "Release 2.14.0"
   git push origin v2.14.0
   \`\`\`

2. Watch the canary for ten minutes on the [[Dashboards|service dashboards]].
3. Promote the canary to all regions.

| Region   | Window (UTC) | Approver        |
|----------|--------------|-----------------|
| eu-west  | 07:00–09:00  | Release captain |
| us-east  | 13:00–15:00  | Release captain |

> Never deploy on a Friday afternoon. If you must, page a second engineer.

## After the release

Post a note in #releases and close the milestone. If error rates rise, follow
[[Rollback]] without waiting for a root cause.

#ops #release
`;

const PAGES: { title: string; parent?: string; content: string }[] = [
  { title: "Runbooks", content: "# Runbooks\n\nEverything the platform team needs when the pager goes off.\n\n- [[Deploying to production]]\n- [[Incident response]]\n- [[On-call handbook]]\n\n#ops" },
  { title: "Deploying to production", parent: "runbooks", content: DEPLOY },
  { title: "Rollback", parent: "deploying-to-production", content: "# Rollback\n\nRevert to the previous tag with `deploy rollback --to v2.13.2`. Check [[Dashboards]] afterwards.\n\n#ops #release" },
  { title: "Incident response", parent: "runbooks", content: "# Incident response\n\n1. Acknowledge the page.\n2. Open an incident channel.\n3. Assign a commander and a scribe.\n\nSee [[On-call handbook]] and [[Postmortem template]].\n\n#ops #incident" },
  { title: "On-call handbook", parent: "runbooks", content: "# On-call handbook\n\nShifts are one week long, Monday to Monday. Hand over in writing.\n\nEscalate to the secondary after 15 minutes. See [[Incident response]].\n\n#ops #oncall" },
  { title: "Postmortem template", parent: "incident-response", content: "# Postmortem template\n\n## Summary\n\n## Timeline\n\n## Root cause\n\n## Action items\n\n#incident" },
  { title: "Dashboards", content: "# Dashboards\n\nLatency, error rate and saturation per service. Alerts fire from the same queries.\n\nUsed by [[Deploying to production]] and [[Rollback]].\n\n#monitoring" },
  { title: "Database failover", parent: "runbooks", content: "# Database failover\n\nPromote the replica, then repoint the connection pooler. Rehearsed quarterly.\n\nSee [[Incident response]] and [[Backup and restore]].\n\n#ops #database" },
  { title: "Team", content: "# Team\n\nWho is who on the platform team, and how we work.\n\n#team" },
];

async function shoot(page: Page, name: string, theme: string): Promise<void> {
  await page.waitForTimeout(300);
  await page.mouse.move(1270, 790);
  await page.screenshot({ path: `${OUT}${name}-${theme}.png` });
}

for (const theme of ["light", "dark"] as const) {
  test(`screenshots (${theme})`, async ({ page, user }) => {
    test.setTimeout(120_000);
    mkdirSync(OUT, { recursive: true });
    await page.addInitScript((t) => localStorage.setItem("cairn.theme", t), theme);
    await page.request.post("/api/settings/profile", { data: { name: "Robin Okafor" } });
    await page.request.put(`/api/workspaces/${user.workspace}`, { data: { name: "Platform team" } });
    for (const p of PAGES) await createPage(page.request, p);

    await page.goto("/app/deploying-to-production");
    await expect(page.locator(".page-content")).toContainText("How the platform team ships");
    await expect(page.locator(".hljs-built_in, .hljs-string").first()).toBeVisible();
    await shoot(page, "page", theme);

    await page.goto("/app/deploying-to-production/edit");
    await expect(page.getByTestId("source-editor")).toBeVisible();
    await expect(page.locator(".editor-preview")).toContainText("How the platform team ships");
    await page.getByTestId("source-editor").click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("\nSee also [[Dat");
    await expect(page.locator(".cm-tooltip-autocomplete")).toBeVisible();
    await shoot(page, "editor", theme);
    await page.keyboard.press("Escape");

    await page.goto("/app/-/search?q=incident&mode=keyword");
    await expect(page.locator(".results li").first()).toBeVisible();
    await page.locator(".header .search-input").fill("rollback");
    await expect(page.locator("#search-results [role=option]").first()).toBeVisible();
    await shoot(page, "search", theme);

    await page.goto("/app/-/graph");
    await expect(page.locator(".graph .node").first()).toBeVisible();
    await shoot(page, "graph", theme);

    await page.goto("/app/-/insights");
    await expect(page.locator(".insights-grid")).toBeVisible();
    await shoot(page, "insights", theme);

    await page.goto("/app/-/settings");
    await expect(page.locator(".settings h1")).toBeVisible();
    await shoot(page, "settings", theme);
  });
}
