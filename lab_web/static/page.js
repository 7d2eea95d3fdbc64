// ozlab web: the live parts of the page, with nothing inline (the Content-Security-Policy
// allows only this file). The server sends HTML it rendered and escaped; this file only
// puts it in place.

const targets = {
  sessions: ["sessions-rows", "replace"],
  transcript: ["transcript", "replace"],
  lines: ["transcript", "append"],
  state: ["session-state", "replace"],
};

for (const source of document.querySelectorAll("[data-live]")) {
  const events = new EventSource(source.dataset.live);
  for (const [name, [id, how]] of Object.entries(targets)) {
    events.addEventListener(name, (event) => {
      const target = document.getElementById(id);
      if (!target) return;
      if (how === "append") target.insertAdjacentHTML("beforeend", event.data);
      else target.innerHTML = event.data;
      document.body.dataset.updated = String(Date.now());
    });
  }
  window.addEventListener("pagehide", () => events.close());
}
