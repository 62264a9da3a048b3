/**
 * The docs site (VitePress), built from docs/: `npm run docs:build` (output in
 * docs/.vitepress/dist), `npm run docs:dev` to preview. test/unit/docs-site.test.ts builds it
 * into a temp folder in `npm test`, dead links failing the build.
 *
 * Headings get GitHub's anchors (githubSlug), so one link such as `operator.md#helm-chart-chartswrit`
 * works on GitHub and on the site; VitePress checks that every linked page exists, and the test
 * checks every heading a link names (in docs/, README.md and CONTRIBUTING.md). Pages never link
 * out of docs/ (a file of the repository is named in code, e.g. `charts/writ/values.yaml`).
 */
import { defineConfig } from "vitepress";

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen. */
export function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

export default defineConfig({
  title: "Writ",
  description: "Authorization for AI agents that spend money",
  srcExclude: ["examples/**"],
  cacheDir: process.env.WRIT_DOCS_CACHE_DIR ?? ".vitepress/cache",
  cleanUrls: true,
  lastUpdated: false,
  ignoreDeadLinks: false,
  markdown: {
    anchor: { slugify: githubSlug },
  },
  themeConfig: {
    search: { provider: "local" },
    outline: { level: [2, 3] },
    nav: [
      { text: "Getting started", link: "/getting-started/" },
      { text: "Concepts", link: "/concepts/" },
      { text: "How-to", link: "/how-to/" },
      { text: "Reference", link: "/reference/" },
      { text: "Operations", link: "/operations/" },
    ],
    sidebar: [
      {
        text: "Getting started",
        items: [
          { text: "Quick start", link: "/getting-started/" },
          { text: "GitOps with a manifest folder", link: "/getting-started/manifest-folder" },
          { text: "Try it on a cluster", link: "/getting-started/cluster" },
        ],
      },
      {
        text: "Concepts",
        items: [
          { text: "Overview", link: "/concepts/" },
          { text: "Evaluation policy", link: "/evaluation" },
          { text: "Records and ledgers", link: "/records" },
          { text: "Registry and trust", link: "/registry" },
          { text: "Payment mandates (AP2)", link: "/mandates" },
          { text: "Exchange rates", link: "/fx" },
          { text: "Threat model", link: "/threat-model" },
        ],
      },
      {
        text: "How-to",
        items: [
          { text: "By user", link: "/how-to/" },
          { text: "Platform team", link: "/how-to/platform-team" },
          { text: "Agent developer", link: "/how-to/agent-developer" },
          { text: "Merchant, wallet, PSP", link: "/how-to/merchant-psp" },
          { text: "Check an agent's request", link: "/how-to/merchant-verify-agent" },
          { text: "Principal", link: "/how-to/principal" },
          { text: "Approve a payment", link: "/how-to/approve-payments" },
          { text: "Prometheus and Grafana", link: "/how-to/monitoring" },
          { text: "The CLI", link: "/cli" },
          { text: "The portal", link: "/portal" },
          { text: "Webhooks", link: "/webhooks" },
          { text: "The public demo", link: "/demo" },
        ],
      },
      {
        text: "Reference",
        items: [
          { text: "Overview", link: "/reference/" },
          { text: "API", link: "/reference/api" },
          { text: "Verify in detail", link: "/verify" },
          { text: "Request signatures", link: "/reference/request-signatures" },
          { text: "Settings", link: "/reference/settings" },
          { text: "Approvals", link: "/reference/approvals" },
          { text: "Formats", link: "/formats" },
          { text: "Reason codes", link: "/reasons" },
          { text: "Metrics", link: "/reference/metrics" },
          { text: "Custom resources", link: "/reference/crds" },
          { text: "Operator and chart in detail", link: "/operator" },
        ],
      },
      {
        text: "Operations",
        items: [
          { text: "Overview", link: "/operations/" },
          { text: "Kubernetes and Helm", link: "/operations/kubernetes" },
          { text: "Replicated Postgres (HA)", link: "/operations/replicated-postgres" },
          { text: "Scale out on Citus", link: "/scale" },
          { text: "Upgrading", link: "/operations/upgrading" },
          { text: "Troubleshooting", link: "/operations/troubleshooting" },
          { text: "Retention", link: "/retention" },
          { text: "Benchmarks", link: "/operations/benchmarks" },
        ],
      },
    ],
  },
});
