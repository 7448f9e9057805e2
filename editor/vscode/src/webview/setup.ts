/**
 * The set-up step as the page draws it (the host's SetupView, chat/setup.ts): the servers found
 * on this machine, a URL and key for any other OpenAI-compatible server, the models the chosen
 * server lists, and the button that tests the model and starts the chat. Everything is text
 * nodes; the page posts what the person chose and the host decides.
 */
import { LOCAL_SERVERS } from "../chat/localServers";
import type { PageMessage } from "../chat/messages";
import type { SetupView } from "../chat/setup";

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(label: string, onClick: () => void, disabled: boolean, id?: string): HTMLButtonElement {
  const node = element("button", undefined, label);
  node.type = "button";
  node.disabled = disabled;
  if (id !== undefined) node.id = id;
  node.addEventListener("click", onClick);
  return node;
}

const BUSY: Record<NonNullable<SetupView["busy"]>, string> = {
  probing: `Looking on this machine (127.0.0.1, ports ${LOCAL_SERVERS.map((s) => s.port).join(", ")})…`,
  listing: "Asking the server for its models…",
  testing: "Asking the model for one word…",
  saving: "Saving the choice and restarting lecode-ls…",
};

/**
 * The set-up's elements, drawn from `view`; the URL field keeps what the person is typing, and
 * `draftKept` says a message of theirs waits in the chat's text box (said while no model is set).
 *
 * What the person acts on first comes first, within the first screen of a short side-bar view
 * (every pane open): the servers found on this machine when there are some, else the URL field;
 * the looking-again and the privacy sentence follow.
 */
export function renderSetup(view: SetupView, post: (message: PageMessage) => void, typedUrl: string | undefined, draftKept = false): HTMLElement {
  const busy = view.busy !== undefined;
  const root = element("section", "setup");
  root.setAttribute("aria-label", "Set up chat");
  root.append(element("h2", undefined, view.current ? "Change the chat model" : "Choose where chat goes"));
  if (draftKept && view.current === undefined) {
    root.append(element("p", "hint kept", "Your message waits in the text box until a model is chosen."));
  }

  // -- on this machine: the servers found (the rest of this part comes after the URL)
  const found = view.local.length > 0;
  const local: HTMLElement[] = [element("h3", undefined, "On this machine")];
  if (found) {
    const list = element("ul", "local-servers");
    for (const server of view.local) {
      const item = element("li");
      const chosen = view.server?.baseUrl === server.baseUrl;
      const pick = button(
        `${server.name} · ${new URL(server.baseUrl).host} · ${server.models} model${server.models === 1 ? "" : "s"}`,
        () => post({ type: "setupServer", baseUrl: server.baseUrl, local: true }),
        busy,
      );
      pick.classList.add("choice");
      pick.setAttribute("aria-pressed", String(chosen));
      item.append(pick);
      list.append(item);
    }
    local.push(list);
  } else if (view.probed) {
    const names = LOCAL_SERVERS.map((s) => `${s.name} ${s.port}`).join(", ");
    local.push(element("p", "hint", `No server answered on 127.0.0.1 (${names}).`));
  }
  local.push(button("Look again", () => post({ type: "setupProbe" }), busy, "setup-probe"));
  if (found) {
    root.append(...local);
  }

  // -- any other server
  root.append(element("h3", undefined, found ? "Or an OpenAI-compatible server" : "An OpenAI-compatible server"));
  const form = element("form", "setup-url");
  const url = element("input");
  url.id = "setup-url";
  url.type = "url";
  url.placeholder = "https://api.openai.com/v1";
  url.setAttribute("aria-label", "Server URL, up to and including /v1");
  url.value = typedUrl ?? view.url;
  url.disabled = busy;
  form.append(url, button("List models", () => form.requestSubmit(), busy, "setup-list"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    post({ type: "setupServer", baseUrl: url.value, local: false });
  });
  root.append(form);
  const key = element("p", "key");
  key.append(
    element("span", "hint", view.keyStored ? "An API key is kept in VS Code's secret storage; it goes to this URL only." : "No API key is stored (a local server needs none)."),
    button(view.keyStored ? "Replace API key…" : "API key…", () => post({ type: "setupKey" }), busy, "setup-key"),
  );
  root.append(key);

  // -- the model
  if (view.server !== undefined && view.models.length > 0) {
    root.append(element("h3", undefined, `Model (${view.models.length} at ${new URL(view.server.baseUrl).host})`));
    const select = element("select");
    select.id = "setup-model";
    select.setAttribute("aria-label", "Model");
    select.disabled = busy;
    select.append(...view.models.map((model) => Object.assign(element("option", undefined, model), { value: model })));
    select.value = view.model ?? "";
    select.addEventListener("change", () => post({ type: "setupModel", model: select.value }));
    root.append(select, button("Test and start chatting", () => post({ type: "setupUse" }), busy || view.model === undefined, "setup-use"));
  }

  if (view.busy !== undefined) {
    const status = element("p", "status", BUSY[view.busy]);
    status.setAttribute("role", "status");
    root.append(status);
  }
  if (view.problem !== undefined) {
    const problem = element("p", "error", view.problem);
    problem.setAttribute("role", "alert");
    root.append(problem);
  }
  if (!found) {
    root.append(...local);
  }
  root.append(
    element(
      "p",
      "hint",
      "lecode sends nothing anywhere until you choose. Your messages and this project's memory go to the server you pick, and nowhere else.",
    ),
  );
  if (view.current !== undefined) {
    root.append(button(`Keep ${view.current.model}`, () => post({ type: "closeSetup" }), busy, "setup-close"));
  }
  return root;
}
