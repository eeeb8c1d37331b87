// Invitations made to the signed-in account's email (GET /api/invitations): a line each
// above the screen, to join or decline, asked once per sign-in.
import { useEffect, useState } from "preact/hooks";
import { api, type InvitationOffer } from "../api";
import { FormError, useAction } from "./Form";
import { t, useI18n } from "../i18n";
import { appHref, navigate } from "../router";
import { user } from "../session";
import { useStore } from "../store";

/** What an invitation offers, as one sentence (here and on the invitation link's screen). */
export function offerText(offer: InvitationOffer): string {
  return t(offer.invited_by ? "invitation.offer_by" : "invitation.offer", {
    name: offer.invited_by ?? "",
    workspace: offer.workspace_name,
    role: t(`workspace.role.${offer.role}`),
  });
}

export function InvitationsForYou() {
  useI18n();
  const me = useStore(user);
  const [items, setItems] = useState<InvitationOffer[]>([]);
  const action = useAction();
  useEffect(() => {
    api.myInvitations().then(
      (r) => setItems(r.items),
      () => undefined,
    );
  }, [me?.id]);
  if (!items.length) return null;

  async function answer(offer: InvitationOffer, join: boolean) {
    await action.run(async () => {
      if (join) await api.acceptMyInvitation(offer.id);
      else await api.declineMyInvitation(offer.id);
      setItems((all) => all.filter((i) => i.id !== offer.id));
      if (join) await navigate(appHref("@" + offer.workspace));
    });
  }

  return (
    <div class="invitations-for-you" role="region" aria-label={t("invitation.for_you")} data-testid="invitations-for-you">
      {items.map((offer) => (
        <p key={offer.id} class="notice">
          <span>{offerText(offer)}</span>{" "}
          <button type="button" class="small primary" disabled={action.busy} onClick={() => void answer(offer, true)}>
            {t("invitation.join", { workspace: offer.workspace_name })}
          </button>{" "}
          <button type="button" class="small" disabled={action.busy} onClick={() => void answer(offer, false)}>
            {t("invitation.decline")}
          </button>
        </p>
      ))}
      <FormError error={action.error} />
    </div>
  );
}
