// Entry point of the console bundle (server/src/console/app.js).
import { render } from "preact";
import { App } from "./app.js";
import { Root } from "./ui/app.js";

const app = new App();
const root = document.getElementById("root");
if (root) {
  root.replaceChildren();
  render(<Root app={app} />, root);
}
app.start();
