import { languageName, switchLanguage, t, useI18n } from "../i18n";

export function LanguageSelect({ signedIn, id }: { signedIn: boolean; id: string }) {
  const cat = useI18n();
  return (
    <label class="language-select" for={id}>
      <span>{t("settings.language")}</span>
      <select
        id={id}
        value={cat.language}
        onChange={(e) => void switchLanguage((e.currentTarget as HTMLSelectElement).value, signedIn)}
      >
        {cat.languages.map((l) => (
          <option key={l} value={l} lang={l}>
            {languageName(l)}
          </option>
        ))}
      </select>
    </label>
  );
}
