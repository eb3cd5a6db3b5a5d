// Moving between pages without reloading: app.js installs the router, pages navigate
// and say what to undo when they are left (timers, listeners, keys).

let router = () => {};
let leaving = [];

export const setRouter = (route) => { router = route; };

export function navigate(path, replace = false) {
  if (replace) history.replaceState(null, '', path); else history.pushState(null, '', path);
  router();
}

/** Run ``undo`` when the page is left. */
export const onLeave = (undo) => { leaving.push(undo); };

/** Leave the page: undo what it set up, newest first. */
export function leave() {
  const undo = leaving.reverse();
  leaving = [];
  for (const step of undo) step();
}
