// Siblings with no order set by hand sort naturally, as the server sorts them (src/order.ts).
import { expect, test } from "vitest";
import { compareTitles, naturalCompare } from "./order";

test("numbers by their value", () => {
  const titles = ["Sprint 10", "Sprint 2", "Sprint 1", "Sprint 11", "Sprint 12", "Sprint 3"];
  expect([...titles].sort(naturalCompare)).toEqual(["Sprint 1", "Sprint 2", "Sprint 3", "Sprint 10", "Sprint 11", "Sprint 12"]);
});

test("case and accents ignored; the same title by slug", () => {
  const pages = [
    { title: "onboarding", slug: "onboarding-2" },
    { title: "Éclair", slug: "eclair" },
    { title: "Onboarding", slug: "onboarding" },
    { title: "Delta", slug: "delta" },
  ];
  expect([...pages].sort(compareTitles).map((p) => p.slug)).toEqual(["delta", "eclair", "onboarding", "onboarding-2"]);
});
