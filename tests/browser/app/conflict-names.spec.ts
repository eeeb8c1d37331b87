// The merge-conflict dialog names who made the other change and when (the 409's
// `theirs`: author and time, the time in the reader's language), and calls the two sides
// "Your edit" and "<name>'s edit", the choices "Keep my version" and "Keep <name>'s
// version" — never "ours" and "theirs".
import type { Page } from "@playwright/test";
import { replaceText, source } from "../editing";
import { axe, createPage, expect, fmt, registerUser, test } from "../fixtures";

// Editing alone (no co-editing session, as where WebSockets do not pass): explicit saves
// against base_revision, the unsaved-changes guard, conflicts. Editing together:
// co-editing.spec.ts.
test.use({ editAlone: true });

test("the conflict dialog says who made the other change and when, and names the choices after them", async ({
  page,
  playwright,
  baseURL,
  en,
  user,
}) => {
  // Alice, another member of the workspace, edits the same line meanwhile.
  const alice = await playwright.request.newContext({ baseURL });
  const aliceUser = await registerUser(alice, "Alice");
  const added = await page.request.post(`/api/workspaces/${user.workspace}/members`, { data: { email: aliceUser.email } });
  expect(added.status(), await added.text()).toBe(201);
  await createPage(page.request, { title: "Budget", slug: "budget", content: "rent\nfood\ntravel\n" });

  await page.goto("/app/budget/edit");
  await expect(source(page)).toContainText("travel");
  const hers = await alice.put(`/api/pages/budget?ws=${user.workspace}`, { data: { content: "rent\nFOOD BY ALICE\ntravel\n" } });
  expect(hers.status(), await hers.text()).toBe(200);
  await replaceText(page, "rent\nMY FOOD\ntravel\n");
  const refused = page.waitForResponse((r) => r.request().method() === "PUT" && r.url().includes("/api/pages/budget"));
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  const problem = await (await refused).json();
  expect(problem.theirs.author.name).toBe("Alice");

  // The time as the reader's language writes it (the time alone, for today).
  const time = await page.evaluate(
    (at) => new Intl.DateTimeFormat("en", { timeStyle: "short" }).format(new Date(at)),
    problem.theirs.at as string,
  );
  const dialog = page.getByRole("dialog", { name: en["page.merge_conflict.title"] });
  await expect(dialog.getByTestId("conflict-intro")).toHaveText(fmt(en["page.conflict.by"]!, { name: "Alice", time }));
  await expect(dialog.getByRole("heading", { name: fmt(en["page.conflict.their_edit"]!, { name: "Alice", time }) })).toBeVisible();
  await expect(dialog.getByRole("heading", { name: en["page.conflict.yours"], exact: true })).toHaveText("Your edit");
  await expect(dialog.getByRole("button", { name: en["page.conflict.keep_yours"], exact: true })).toHaveText("Keep my version");
  const keepHers = dialog.getByRole("button", { name: "Keep Alice’s version", exact: true });
  await expect(keepHers).toBeVisible();
  await expect(dialog).not.toContainText(/\b(theirs|ours|mine)\b/i);
  // The merged text's markers are labelled the same way by the server.
  const merged = await dialog.getByTestId("conflict-merged").inputValue();
  expect(merged).toMatch(/^<<<<<<< Your edit$/m);
  expect(merged).toMatch(/^>>>>>>> Alice, \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/m);

  await axe(page, "conflict dialog");
  await keepHers.click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect(await (await page.request.get("/api/pages/budget/raw")).text()).toBe("rent\nFOOD BY ALICE\ntravel\n");
  await alice.dispose();
});
