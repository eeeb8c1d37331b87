import { describe, expect, it } from "vitest";
import { highlighted } from "./listbox";

describe("the keys of a listbox", () => {
  it("move round from the last option to the first and back", () => {
    expect(highlighted("ArrowDown", 0, 3)).toBe(1);
    expect(highlighted("ArrowDown", 2, 3)).toBe(0);
    expect(highlighted("ArrowUp", 0, 3)).toBe(2);
    expect(highlighted("ArrowUp", 2, 3)).toBe(1);
  });

  it("go to the ends with Home and End", () => {
    expect(highlighted("Home", 2, 3)).toBe(0);
    expect(highlighted("End", 0, 3)).toBe(2);
  });

  it("start from nothing highlighted", () => {
    expect(highlighted("ArrowDown", -1, 3)).toBe(0);
    expect(highlighted("ArrowUp", -1, 3)).toBe(2);
  });

  it("leave other keys to the list", () => {
    expect(highlighted("Enter", 1, 3)).toBeUndefined();
    expect(highlighted("a", 1, 3)).toBeUndefined();
  });
});
