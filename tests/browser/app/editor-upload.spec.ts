// Image upload from the editor's toolbar button (a file picker; phones cannot paste
// files): `POST /api/uploads` with `ws=`, `![name](url)` inserted at the cursor on a line
// of its own, one undo step. A refused file (415: not an image; 413: too large) gets a
// clear message naming it, and nothing is inserted. (Paste and drop: editor.spec.ts.)
import type { Page } from "@playwright/test";
import { createPage, errorLine, expect, fmt, test, type Messages } from "../fixtures";

const source = (page: Page) => page.getByTestId("source-editor");
const doc = (page: Page) =>
  source(page).evaluate((el) => [...el.querySelectorAll(".cm-line")].map((l) => l.textContent).join("\n"));

// A 1×1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** Clicks the toolbar's image button and picks `files` in the file chooser. */
async function pick(page: Page, en: Messages, files: { name: string; mimeType: string; buffer: Buffer }[]) {
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("toolbar").getByRole("button", { name: en["upload.image"], exact: true }).click();
  await (await chooser).setFiles(files);
}

test("the image button uploads the picked image and inserts it at the cursor", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Photos", content: "Photos\n\nbefore the picture\nafter\n" });
  await page.goto("/app/photos/edit");
  await expect(page.getByRole("toolbar")).toBeVisible();
  // The cursor in the middle of a line: the image goes on a line of its own.
  await source(page).locator(".cm-line", { hasText: "before the picture" }).click();
  await page.keyboard.press("End");
  for (let i = 0; i < " picture".length; i++) await page.keyboard.press("ArrowLeft");
  const uploaded = page.waitForResponse((r) => r.url().includes("/api/uploads") && r.request().method() === "POST");
  await pick(page, en, [{ name: "holiday.png", mimeType: "image/png", buffer: PNG }]);
  const res = await uploaded;
  expect(res.status()).toBe(201);
  expect(new URL(res.url()).searchParams.get("ws")).toBe(user.workspace);
  const url = (await res.json()).url as string;
  await expect.poll(() => doc(page)).toBe(`Photos\n\nbefore the\n![holiday](${url})\n picture\nafter\n`);
  const img = page.locator(".editor-preview img");
  await expect(img).toHaveAttribute("alt", "holiday");
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(1);
  // One undo step takes it out again.
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe("Photos\n\nbefore the picture\nafter\n");
  await page.keyboard.press("Control+y");
  await page.keyboard.press("Control+s");
  await expect
    .poll(async () => (await page.request.get("/api/pages/photos/raw")).text())
    .toBe(`Photos\n\nbefore the\n![holiday](${url})\n picture\nafter\n`);
});

test("a file that is not an image is refused with a message naming it; nothing is inserted", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Refusals", content: "Refusals\n\ntext\n" });
  await page.goto("/app/refusals/edit");
  await expect(page.getByRole("toolbar")).toBeVisible();
  await source(page).locator(".cm-line", { hasText: "text" }).click();
  const answered = page.waitForResponse((r) => r.url().includes("/api/uploads"));
  // Named like an image, but the server sniffs the bytes.
  await pick(page, en, [{ name: "notes.png", mimeType: "image/png", buffer: Buffer.from("just some text, not a picture\n") }]);
  expect((await answered).status()).toBe(415);
  const { message } = errorLine(page);
  await expect(message).toHaveText(fmt(en["upload.failed"]!, { name: "notes.png", reason: en["upload.type_not_allowed"]! }));
  expect(await doc(page)).toBe("Refusals\n\ntext\n");

  // Dropped files that are no image get the same answer (not silently ignored).
  const again = page.waitForResponse((r) => r.url().includes("/api/uploads"));
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(["%PDF-1.4\n"], "report.pdf", { type: "application/pdf" }));
    const target = document.querySelector(".cm-content")!;
    for (const type of ["dragenter", "dragover", "drop"]) {
      target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  });
  expect((await again).status()).toBe(415);
  await expect(message).toHaveText(fmt(en["upload.failed"]!, { name: "report.pdf", reason: en["upload.type_not_allowed"]! }));
  expect(await doc(page)).toBe("Refusals\n\ntext\n");
});

test("a file over the upload limit is refused with a message naming it and the limit", async ({ page, en, user }) => {
  void user;
  const system = await (await page.request.get("/api/system")).json();
  const max = system.upload_max_bytes as number;
  await createPage(page.request, { title: "Huge", content: "Huge\n\ntext\n" });
  await page.goto("/app/huge/edit");
  await expect(page.getByRole("toolbar")).toBeVisible();
  await source(page).locator(".cm-line", { hasText: "text" }).click();
  // A real PNG header, then more bytes than the server takes.
  const big = Buffer.alloc(max + 1024);
  PNG.copy(big);
  const answered = page.waitForResponse((r) => r.url().includes("/api/uploads"));
  await pick(page, en, [{ name: "poster.png", mimeType: "image/png", buffer: big }]);
  expect((await answered).status()).toBe(413);
  const limit = max >= 1024 * 1024 ? `${Math.round((max / 1024 / 1024) * 10) / 10} MB` : `${Math.round(max / 1024)} KB`;
  const reason = fmt(en["upload.too_large"]!, { max: limit });
  await expect(errorLine(page).message).toHaveText(fmt(en["upload.failed"]!, { name: "poster.png", reason }));
  expect(await doc(page)).toBe("Huge\n\ntext\n");
});

test("typing on while an upload runs: the image lands where it was asked, the cursor stays put", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Busy", content: "Busy\n\nfirst\nsecond\n" });
  await page.goto("/app/busy/edit");
  await expect(page.getByRole("toolbar")).toBeVisible();
  // A slow upload (held back 800 ms), asked for at the start of the line "second".
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route("**/api/uploads*", async (route) => {
    await held;
    await route.continue();
  });
  await source(page).locator(".cm-line", { hasText: "second" }).click();
  await page.keyboard.press("Home");
  const uploaded = page.waitForResponse((r) => r.url().includes("/api/uploads") && r.request().method() === "POST");
  await pick(page, en, [{ name: "late.png", mimeType: "image/png", buffer: PNG }]);
  await expect(page.getByTestId("editor-status")).toHaveText(en["upload.uploading"]!);
  // Meanwhile the person writes above it.
  await page.keyboard.press("Control+Home");
  await page.keyboard.type("Intro ");
  release();
  const url = (await (await uploaded).json()).url as string;
  await expect.poll(() => doc(page)).toBe(`Intro Busy\n\nfirst\n![late](${url})\nsecond\n`);
  await page.keyboard.type("X");
  await expect.poll(() => doc(page)).toBe(`Intro XBusy\n\nfirst\n![late](${url})\nsecond\n`);
});
