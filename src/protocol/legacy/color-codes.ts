/**
 * Colour-code strippers, one per engine family (docs/protocols-legacy.md, "Raw and clean"). Used by normalisation
 * only: decoders keep the raw text. A "generic" stripper would damage names in other families
 * (`^c123` is a Quake 4 colour but an ET colour `^c` followed by "123"), so each game's family
 * comes from the quirk table (quirks.ts).
 */
export type ColorFamily =
  | "idtech" // Quake 3, RtCW, ET, JK2/JKA, SOF2, EF, CoD 2+, Doom 3, Prey, ETQW
  | "cod1" // Call of Duty 1 / UO: also ^^ + a digit written twice
  | "darkplaces" // Nexuiz, Xonotic
  | "quake4"
  | "unreal2" // 0x1B + 3 RGB bytes (America's Army via GameSpy 2)
  | "minecraft" // § + one char
  | "none";

const IDTECH = /\^(X[0-9A-Fa-f]{6}|[^^])/g;
const COD1_DOUBLE = /\^\^([0-9])\1/g;
const DARKPLACES = /\^(x[0-9A-Fa-f]{3}|[0-9])/g;
const QUAKE4 = /\^(c[0-9]{3}|i[\s\S]{3}|[0-9])/g;
const UNREAL2 = /\x1B[\s\S]{3}/g;
const MINECRAFT = /\u00A7[\s\S]/g;
// C0 controls (Halo puts 0x01... in host names; CoD pads names with 0x01) except tab.
const CONTROLS = /[\x00-\x08\x0A-\x1F\x7F]/g;

export function stripColorCodes(text: string, family: ColorFamily): string {
  switch (family) {
    case "idtech":
      return text.replace(IDTECH, "");
    case "cod1":
      return text.replace(COD1_DOUBLE, "").replace(IDTECH, "");
    case "darkplaces":
      return text.replace(DARKPLACES, "").replace(/\^\^/g, "^");
    case "quake4":
      return text.replace(QUAKE4, "");
    case "unreal2":
      return text.replace(UNREAL2, "");
    case "minecraft":
      return text.replace(MINECRAFT, "");
    case "none":
      return text;
  }
}

/** A display string: colour codes of the family removed, then control bytes removed. */
export function cleanText(text: string, family: ColorFamily): string {
  return stripColorCodes(text, family).replace(CONTROLS, "");
}
