/** The web pages' single entry: a small router over the pathname, then one page component. */
import { render } from "preact";
import { AggregatePage } from "./aggregate";
import { BrowserPage } from "./browser";
import { interceptLinks, useLocation } from "./router";
import { ServerPage } from "./server";
import "./style.css";

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function App() {
  const url = useLocation();
  const [, section, value] = url.pathname.split("/");
  let page;
  if (section === "servers" && value) page = <ServerPage id={decode(value)} url={url} />;
  else if (section === "games" && value)
    page = <AggregatePage key={`g-${value}`} kind="game" value={decode(value)} url={url} />;
  else if (section === "maps" && value)
    page = <AggregatePage key={`m-${value}`} kind="map" value={decode(value)} url={url} />;
  else page = <BrowserPage url={url} />;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          gsindex
        </a>
        <nav aria-label="Site">
          <a href="/" aria-current={section === undefined || section === "" ? "page" : undefined}>
            Servers
          </a>
          <a href="/graphql">GraphQL API</a>
        </nav>
      </header>
      {page}
    </>
  );
}

const root = document.getElementById("app");
if (root) {
  interceptLinks(root);
  render(<App />, root);
}
