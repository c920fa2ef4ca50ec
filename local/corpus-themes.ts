/**
 * The wording the synthetic corpus (./corpus.ts) is written from: twelve themes of project plans,
 * each with its titles, teams, goals, prose, risks, workstreams (verbs and objects) and task
 * endings, plus owners and months. Data only, kept apart from the generator; it is long because
 * distinct vocabulary per theme is what gives semantic search and clustering real signal.
 */

export interface Workstream {
  heading: string;
  /** In the imperative: "migrate". */
  verbs: string[];
  /** Noun phrases, with their article. */
  objects: string[];
}

export interface Theme {
  name: string;
  titles: string[];
  teams: string[];
  goals: string[];
  /**
   * Prose sentences: {object} becomes one of the theme's objects ({is} and {has} agree with it),
   * {team} one of its teams, {quarter} the plan's quarter.
   */
  prose: string[];
  risks: string[];
  workstreams: Workstream[];
  /** Endings of task wording, specific to the theme. */
  qualifiers: string[];
}

// Wording never uses the dependency cues (after, once, before, requires, needs, blocked by, …)
// except where a dependency is meant, so every edge the heuristic finds is one the corpus put there.
export const THEMES: readonly Theme[] = [
  {
    name: 'revenue',
    titles: ['Revenue Growth Plan', 'Pipeline Acceleration Plan', 'Expansion Revenue Playbook', 'Pricing and Packaging Overhaul'],
    teams: ['sales operations', 'revenue operations', 'the account executives', 'the deal desk'],
    goals: ['Grow net new bookings by 25 % quarter over quarter', 'Lift average contract value for mid-market deals', 'Cut discounting on renewals to under 10 %', 'Raise pipeline coverage to three times quota'],
    prose: [
      'Bookings in the mid-market segment stalled last quarter, and {object} {is} the main lever we control.',
      '{team} owns the revenue targets for {quarter} and reports progress weekly in the pipeline review.',
      'Discount approvals slowed several enterprise deals, so we give {object} a simpler approval path.',
      'Win rates improve when quotes go out within two days; {object} should make that the norm.',
      'Renewal revenue is predictable, but expansion revenue comes from account planning with {team}.',
      'Every change to pricing is reviewed with finance and tested on a small set of accounts first.',
    ],
    risks: ['Aggressive pricing changes could slow renewals in the enterprise segment.', 'Quota capacity is thin in EMEA until new account executives ramp.', 'Forecast accuracy drops when opportunities skip the qualification stage.'],
    workstreams: [
      {
        heading: 'Pricing and packaging',
        verbs: ['publish', 'revise', 'approve', 'test', 'roll out'],
        objects: ['the enterprise pricing tiers', 'the usage-based billing plan', 'the annual discount policy', 'the pricing page copy', 'the seat-based packaging', 'the upsell price list'],
      },
      {
        heading: 'Pipeline and forecasting',
        verbs: ['qualify', 'forecast', 'review', 'clean up', 'score'],
        objects: ['the mid-market sales pipeline', 'the inbound lead queue', 'the renewal forecast', 'the top fifty opportunities', 'the deal desk approvals', 'the quarterly bookings target'],
      },
      {
        heading: 'Account expansion',
        verbs: ['launch', 'negotiate', 'map', 'plan', 'track'],
        objects: ['the account expansion campaign', 'the cross-sell bundle', 'the churn-risk renewals', 'the reseller agreement', 'the sales commission plan', 'the strategic account plans'],
      },
    ],
    qualifiers: ['for mid-market accounts', 'in the EMEA region', 'with the sales operations team', 'for the bookings target', 'across enterprise customers', 'to lift average contract value', 'for the North America territory', 'with the revenue operations lead', 'for strategic accounts', 'to reduce discounting on renewals'],
  },
  {
    name: 'hiring',
    titles: ['Engineering Hiring Plan', 'Recruiting Ramp-up Plan', 'Headcount Plan', 'Talent Acquisition Roadmap'],
    teams: ['the recruiting team', 'the hiring managers', 'people operations', 'the interview panel'],
    goals: ['Hire twelve engineers and two engineering managers', 'Keep time to offer under 25 days', 'Reach a 90 % offer acceptance rate', 'Give every candidate feedback within 48 hours'],
    prose: [
      'The backend team is understaffed for the roadmap, and {object} will decide how fast we can close the gap.',
      '{team} meets twice a week to calibrate candidates and restart stalled loops.',
      'Candidates told us the process felt slow, so we give {object} tighter turnaround times.',
      'Referrals convert at three times the rate of job boards; {team} will run a referral push in {quarter}.',
      'Every interviewer completes the structured interview training, and {object} {is} kept consistent across panels.',
      'Offers follow the compensation bands approved by people operations.',
    ],
    risks: ['Senior backend candidates are scarce in our time zones.', 'Interviewer fatigue lowers the quality of feedback.', 'Compensation bands may lag the market for staff-level roles.'],
    workstreams: [
      {
        heading: 'Sourcing and pipeline',
        verbs: ['post', 'source', 'screen', 'shortlist', 'contact'],
        objects: ['the senior backend engineer role', 'the engineering manager opening', 'the staff data engineer role', 'the candidate referral list', 'the university graduate pool', 'the site reliability engineer opening'],
      },
      {
        heading: 'Interview loop',
        verbs: ['design', 'calibrate', 'schedule', 'train', 'update'],
        objects: ['the system design interview', 'the coding exercise rubric', 'the interviewer training', 'the onsite interview loop', 'the hiring committee review', 'the candidate scorecards'],
      },
      {
        heading: 'Offers and onboarding',
        verbs: ['prepare', 'extend', 'finalize', 'set up', 'welcome'],
        objects: ['the offer letters', 'the compensation bands', 'the relocation package', 'the onboarding buddy program', 'the new hire laptops', 'the first-week onboarding schedule'],
      },
    ],
    qualifiers: ['for the platform team', 'with the recruiting coordinator', 'for senior engineering candidates', 'in the Berlin office', 'for remote candidates', 'with the hiring manager', 'to shorten time to offer', 'for the data engineering team', 'for the new engineering cohort', 'with people operations'],
  },
  {
    name: 'infrastructure',
    titles: ['Infrastructure Modernization Plan', 'Cloud Migration Plan', 'Platform Reliability Roadmap', 'Kubernetes Adoption Plan'],
    teams: ['the platform team', 'site reliability engineering', 'the infrastructure guild', 'the on-call rotation'],
    goals: ['Move every production service to Kubernetes', 'Reach 99.95 % availability for the public API', 'Cut cloud spend by 20 % without losing headroom', 'Recover any database within 15 minutes'],
    prose: [
      'Most outages last quarter started in the legacy virtual machines, which makes {object} the first priority.',
      '{team} owns the rollout and keeps a runbook for every step.',
      'Terraform is the source of truth: {object} {is} changed through pull requests only, never by hand.',
      'Capacity tests run in staging every week so {object} will never surprise us in production.',
      'Each cluster change is rolled out region by region with a rollback plan ready.',
      'Latency budgets for {quarter} are tracked on the shared Grafana dashboards.',
    ],
    risks: ['The Postgres upgrade calls for a maintenance window that customers must be told about.', 'Terraform state drift in the legacy account could break automated rollouts.', 'Node pool autoscaling has not been load tested at peak traffic.'],
    workstreams: [
      {
        heading: 'Cluster migration',
        verbs: ['migrate', 'provision', 'configure', 'upgrade', 'decommission'],
        objects: ['the Kubernetes production cluster', 'the legacy virtual machines', 'the staging node pools', 'the ingress controllers', 'the Helm chart repository', 'the container registry'],
      },
      {
        heading: 'Databases and storage',
        verbs: ['replicate', 'back up', 'shard', 'tune', 'restore'],
        objects: ['the primary Postgres database', 'the Redis cache cluster', 'the object storage buckets', 'the read replicas', 'the nightly database snapshots', 'the connection pooler'],
      },
      {
        heading: 'Observability and automation',
        verbs: ['automate', 'instrument', 'harden', 'deploy', 'codify'],
        objects: ['the Grafana latency dashboards', 'the Prometheus alert rules', 'the CI deployment pipeline', 'the Terraform network modules', 'the log shipping agents', 'the autoscaling policies'],
      },
    ],
    qualifiers: ['in the eu-west region', 'for the production environment', 'with zero downtime', 'in the staging environment', 'with Terraform', 'for the public API', 'under peak load', 'across all availability zones', 'with the on-call engineers', 'to cut p99 latency'],
  },
  {
    name: 'compliance',
    titles: ['SOC 2 Readiness Plan', 'GDPR Compliance Program', 'Audit Preparation Plan', 'ISO 27001 Certification Plan'],
    teams: ['the compliance office', 'the audit working group', 'legal and compliance', 'the data protection officer'],
    goals: ['Pass the SOC 2 Type II audit with no exceptions', 'Answer every data subject request within 30 days', 'Keep evidence for every control in one place', 'Train all staff on data protection yearly'],
    prose: [
      'The auditors sample evidence across the whole period, so {object} must be complete and dated.',
      '{team} maps every control to an owner and a piece of evidence.',
      'Customers increasingly ask for our SOC 2 report during procurement; {object} {is} on the critical path for several deals.',
      'Policies are reviewed yearly and signed by every employee through the HR system.',
      'The data processing inventory for {quarter} lists every system that stores personal data, including {object}.',
      'Gaps found in the readiness assessment are tracked as remediation items with due dates.',
    ],
    risks: ['Evidence gathered by hand may miss weeks of the audit period.', 'Subprocessor contracts without data processing agreements expose us under GDPR.', 'Control owners change during reorganisations and evidence goes stale.'],
    workstreams: [
      {
        heading: 'Controls and evidence',
        verbs: ['document', 'collect', 'map', 'test', 'remediate'],
        objects: ['the access review evidence', 'the change management controls', 'the SOC 2 control matrix', 'the vendor risk assessments', 'the audit evidence folder', 'the control owner assignments'],
      },
      {
        heading: 'Policies',
        verbs: ['draft', 'approve', 'publish', 'sign', 'revise'],
        objects: ['the information security policy', 'the data retention policy', 'the acceptable use policy', 'the incident response policy', 'the business continuity plan', 'the employee policy acknowledgements'],
      },
      {
        heading: 'Privacy and GDPR',
        verbs: ['inventory', 'audit', 'renew', 'classify', 'file'],
        objects: ['the data processing agreements', 'the records of processing activities', 'the subprocessor list', 'the data subject request workflow', 'the privacy impact assessment', 'the personal data inventory'],
      },
    ],
    qualifiers: ['for the SOC 2 audit', 'with the external auditors', 'under GDPR', 'for the audit period', 'with the data protection officer', 'for every subprocessor', 'in the compliance tracker', 'for the ISO 27001 scope', 'with legal counsel', 'for customer security questionnaires'],
  },
  {
    name: 'marketing',
    titles: ['Product Launch Marketing Plan', 'Demand Generation Plan', 'Brand Refresh Plan', 'Content Marketing Calendar'],
    teams: ['the growth marketing team', 'product marketing', 'the content team', 'the brand studio'],
    goals: ['Double marketing-qualified leads from organic search', 'Launch the new brand across every channel', 'Publish two long-form articles a week', 'Reach 40 % open rate on the newsletter'],
    prose: [
      'Organic search brings our best leads, so we put most of the budget for this quarter into {object}.',
      '{team} runs the campaign calendar and reviews results every Monday.',
      'Messaging tested poorly with technical buyers, which is why {object} {is} being rewritten.',
      'Paid social spend for {quarter} is capped until the attribution model is trustworthy.',
      'Every asset follows the new brand guidelines, from {object} to the webinar slides.',
      'Launch week is coordinated with sales so that leads are followed up within a day.',
    ],
    risks: ['The launch date may slip and leave paid campaigns running without a product page.', 'Attribution gaps make it hard to compare channels.', 'The brand refresh could confuse existing customers if announced poorly.'],
    workstreams: [
      {
        heading: 'Campaigns',
        verbs: ['launch', 'plan', 'run', 'optimize', 'segment'],
        objects: ['the paid social campaign', 'the email nurture sequence', 'the webinar series', 'the retargeting ads', 'the launch week campaign', 'the newsletter audience'],
      },
      {
        heading: 'Content and SEO',
        verbs: ['write', 'edit', 'publish', 'optimize', 'refresh'],
        objects: ['the customer case studies', 'the product comparison pages', 'the launch blog post', 'the SEO keyword clusters', 'the developer tutorial series', 'the landing page copy'],
      },
      {
        heading: 'Brand',
        verbs: ['design', 'approve', 'roll out', 'shoot', 'localize'],
        objects: ['the new logo and color palette', 'the brand guidelines', 'the product demo video', 'the trade show booth', 'the website hero illustrations', 'the social media templates'],
      },
    ],
    qualifiers: ['for the product launch', 'with the design agency', 'for technical buyers', 'on LinkedIn and YouTube', 'for the spring campaign', 'to grow organic traffic', 'with product marketing', 'for the newsletter subscribers', 'in German and French', 'for the developer audience'],
  },
  {
    name: 'security',
    titles: ['Security Hardening Plan', 'Zero Trust Rollout', 'Vulnerability Management Program', 'Incident Response Readiness Plan'],
    teams: ['the security engineering team', 'the incident response team', 'the red team', 'the identity team'],
    goals: ['Enforce phishing-resistant MFA for every employee', 'Patch critical vulnerabilities within 72 hours', 'Rotate every production secret automatically', 'Run a tabletop incident exercise every quarter'],
    prose: [
      'The last penetration test found weak spots in authentication, so {object} {is} the first fix.',
      '{team} triages new findings daily and assigns them by severity.',
      'Long-lived credentials are the most common root cause of breaches; {object} will remove most of ours.',
      'Every critical vulnerability gets an owner and a patch deadline in the tracker.',
      'Endpoint telemetry for {quarter} feeds the SIEM so that {object} can be investigated quickly.',
      'Access is granted through groups in the identity provider, never to individuals.',
    ],
    risks: ['Legacy services without SSO support may keep shared passwords alive.', 'Alert fatigue in the SIEM could hide a real intrusion.', 'Third-party libraries with known CVEs ship in older mobile builds.'],
    workstreams: [
      {
        heading: 'Identity and access',
        verbs: ['enforce', 'rotate', 'revoke', 'enroll', 'restrict'],
        objects: ['the hardware security keys', 'the single sign-on integration', 'the production SSH access', 'the service account credentials', 'the admin role permissions', 'the API signing secrets'],
      },
      {
        heading: 'Vulnerability management',
        verbs: ['scan', 'patch', 'triage', 'fix', 'retest'],
        objects: ['the container image vulnerabilities', 'the dependency CVE backlog', 'the external penetration test findings', 'the web application firewall rules', 'the bug bounty reports', 'the mobile app dependencies'],
      },
      {
        heading: 'Detection and response',
        verbs: ['deploy', 'tune', 'rehearse', 'write', 'monitor'],
        objects: ['the SIEM detection rules', 'the endpoint detection agents', 'the incident response runbook', 'the tabletop exercise', 'the security alert triage rota', 'the forensic logging pipeline'],
      },
    ],
    qualifiers: ['for all employees', 'in the production accounts', 'with the security engineering team', 'for critical CVEs', 'under the zero trust model', 'with the identity provider', 'for contractor laptops', 'to meet the 72-hour patch window', 'across every AWS account', 'with the incident commander'],
  },
  {
    name: 'product',
    titles: ['Product Roadmap', 'Mobile App Launch Plan', 'Onboarding Redesign Plan', 'Feature Discovery Plan'],
    teams: ['the product squad', 'product design', 'the mobile team', 'the growth squad'],
    goals: ['Ship the redesigned onboarding flow to every new user', 'Raise week-one activation to 45 %', 'Launch the mobile app in both stores', 'Interview twenty customers every month'],
    prose: [
      'Half of new users drop out during setup, so {object} {is} the biggest activation opportunity.',
      '{team} ships behind feature flags and reads the funnel daily.',
      'Customer interviews keep pointing at {object} as the most confusing part of the product.',
      'The roadmap for {quarter} favours fewer, finished features over many half-built ones.',
      'Every release note links the customer requests it closes.',
      'Design reviews happen on prototypes, not on finished code, so {object} {is} tested with users first.',
    ],
    risks: ['App store review times could delay the mobile launch.', 'Feature flags left on indefinitely make the product hard to reason about.', 'Scope creep on the dashboard redesign threatens the release date.'],
    workstreams: [
      {
        heading: 'Discovery',
        verbs: ['interview', 'prototype', 'validate', 'prioritize', 'sketch'],
        objects: ['the onboarding user research', 'the dashboard prototype', 'the feature request backlog', 'the pricing experiment hypotheses', 'the customer journey map', 'the usability test script'],
      },
      {
        heading: 'Build and release',
        verbs: ['ship', 'build', 'flag', 'release', 'polish'],
        objects: ['the redesigned onboarding flow', 'the mobile app beta', 'the in-app notifications', 'the team workspace settings', 'the saved views feature', 'the dark mode theme'],
      },
      {
        heading: 'Measurement',
        verbs: ['measure', 'instrument', 'analyze', 'define', 'report'],
        objects: ['the activation funnel events', 'the weekly retention cohorts', 'the feature adoption metrics', 'the north star metric', 'the A/B test results', 'the release health report'],
      },
    ],
    qualifiers: ['for new users', 'on iOS and Android', 'behind a feature flag', 'with product design', 'for the beta cohort', 'to raise week-one activation', 'for team admins', 'with the mobile team', 'for the spring release', 'in the web app'],
  },
  {
    name: 'customer support',
    titles: ['Customer Support Excellence Plan', 'Support Operations Plan', 'Help Center Overhaul', 'Customer Satisfaction Improvement Plan'],
    teams: ['the support team', 'support operations', 'the tier-two escalation desk', 'the customer success managers'],
    goals: ['Answer every ticket within four business hours', 'Reach a CSAT score of 95 %', 'Deflect 30 % of tickets through the help center', 'Resolve escalations within two days'],
    prose: [
      'Ticket volume grew faster than the team last quarter, so {object} {has} to absorb more of the load.',
      '{team} reviews the top ticket drivers every Friday and feeds them back to product.',
      'Customers rate us lowest on first response time, which {object} {is} meant to fix.',
      'Macros cover the twenty most common questions; {object} should cover the rest.',
      'Weekend coverage for {quarter} follows a rota shared by both support hubs.',
      'Every escalation is tagged so that recurring bugs reach engineering with evidence.',
    ],
    risks: ['A product incident can triple ticket volume in a day.', 'Help center articles go stale with every release.', 'Escalations without clear ownership bounce between teams.'],
    workstreams: [
      {
        heading: 'Help center',
        verbs: ['write', 'update', 'translate', 'restructure', 'archive'],
        objects: ['the help center articles', 'the billing FAQ', 'the troubleshooting guides', 'the getting started videos', 'the chatbot answers', 'the known issues page'],
      },
      {
        heading: 'Ticket operations',
        verbs: ['triage', 'route', 'tag', 'escalate', 'close'],
        objects: ['the ticket routing rules', 'the support macros', 'the escalation queue', 'the weekend support rota', 'the SLA breach alerts', 'the refund request tickets'],
      },
      {
        heading: 'Customer satisfaction',
        verbs: ['survey', 'call', 'review', 'coach', 'follow up on'],
        objects: ['the CSAT survey responses', 'the detractor accounts', 'the quality assurance scorecards', 'the support agent coaching plan', 'the onboarding calls', 'the churned customer interviews'],
      },
    ],
    qualifiers: ['in Zendesk', 'for enterprise customers', 'with the support leads', 'to cut first response time', 'for Spanish-speaking customers', 'for the billing queue', 'with customer success', 'during weekend coverage', 'for tier-two escalations', 'to lift CSAT'],
  },
  {
    name: 'finance',
    titles: ['Annual Budget Plan', 'Financial Close Improvement Plan', 'Cost Reduction Plan', 'Fundraising Preparation Plan'],
    teams: ['the finance team', 'the controller', 'financial planning and analysis', 'accounts payable'],
    goals: ['Close the books within five business days', 'Cut vendor spend by 15 %', 'Keep twelve months of cash runway', 'Publish the board pack a week early'],
    prose: [
      'The monthly close takes twelve days today, and {object} {is} where most of that time goes.',
      '{team} owns the budget and reviews variances with each department head.',
      'Cash runway for {quarter} is healthy, but {object} will decide how long it stays that way.',
      'Vendor contracts renew automatically unless someone objects, so every renewal is reviewed.',
      'The board expects a reforecast every quarter, built from the same model as the budget.',
      'Expense policies apply to everyone and are enforced in the expense tool, including {object}.',
    ],
    risks: ['Manual journal entries make the close error-prone.', 'Currency swings affect the EMEA budget.', 'Unused software licences renew without review.'],
    workstreams: [
      {
        heading: 'Budget and forecast',
        verbs: ['model', 'reforecast', 'allocate', 'present', 'reconcile'],
        objects: ['the annual operating budget', 'the headcount cost model', 'the cash runway forecast', 'the department spend targets', 'the board financial pack', 'the budget variance report'],
      },
      {
        heading: 'Close and reporting',
        verbs: ['close', 'accrue', 'audit', 'automate', 'file'],
        objects: ['the month-end close checklist', 'the revenue recognition schedule', 'the bank reconciliations', 'the payroll journal entries', 'the quarterly tax filings', 'the general ledger mappings'],
      },
      {
        heading: 'Spend management',
        verbs: ['renegotiate', 'cancel', 'consolidate', 'approve', 'benchmark'],
        objects: ['the SaaS vendor contracts', 'the unused software licences', 'the travel expense policy', 'the purchase order workflow', 'the cloud spend commitments', 'the corporate card limits'],
      },
    ],
    qualifiers: ['for the fiscal year', 'with the controller', 'in NetSuite', 'for the board meeting', 'to extend cash runway', 'for every department', 'with the external accountants', 'in euros and dollars', 'for the audit committee', 'to hit the five-day close'],
  },
  {
    name: 'data and analytics',
    titles: ['Data Platform Roadmap', 'Analytics Enablement Plan', 'Data Warehouse Migration Plan', 'Self-serve Reporting Plan'],
    teams: ['the data platform team', 'the analytics engineers', 'business intelligence', 'the data governance council'],
    goals: ['Move every dashboard to the new warehouse', 'Keep core data models fresh within one hour', 'Document every table used in executive reporting', 'Let every team answer its own questions in Looker'],
    prose: [
      'Analysts spend half their week reconciling numbers, so {object} must become the single source of truth.',
      '{team} owns the dbt project and reviews every model change.',
      'Executive dashboards disagree with finance reports, which is why {object} {is} being rebuilt.',
      'Data freshness for {quarter} is monitored with alerts on every critical pipeline.',
      'Column-level lineage lets us see which dashboards break when {object} {is} changed.',
      'Personal data is masked in the warehouse, and access is granted per role.',
    ],
    risks: ['Schema changes in the product database break pipelines silently.', 'Dashboard sprawl makes metrics inconsistent between teams.', 'Warehouse costs grow with every unoptimised query.'],
    workstreams: [
      {
        heading: 'Pipelines',
        verbs: ['ingest', 'orchestrate', 'backfill', 'monitor', 'partition'],
        objects: ['the Airflow ingestion DAGs', 'the event tracking stream', 'the CRM data sync', 'the product usage tables', 'the change data capture feed', 'the Snowflake staging schema'],
      },
      {
        heading: 'Modeling',
        verbs: ['model', 'refactor', 'test', 'document', 'deduplicate'],
        objects: ['the dbt revenue models', 'the customer dimension table', 'the subscription fact table', 'the metrics layer definitions', 'the data quality tests', 'the data catalog entries'],
      },
      {
        heading: 'Reporting',
        verbs: ['build', 'migrate', 'retire', 'visualize', 'certify'],
        objects: ['the executive KPI dashboard', 'the Looker explores', 'the churn analysis notebook', 'the self-serve reporting templates', 'the legacy Tableau workbooks', 'the weekly metrics email'],
      },
    ],
    qualifiers: ['in Snowflake', 'with dbt', 'for the executive team', 'in Looker', 'with the analytics engineers', 'for finance reporting', 'with hourly freshness', 'for the growth team', 'with column-level lineage', 'for the data warehouse migration'],
  },
  {
    name: 'partnerships',
    titles: ['Partner Program Plan', 'Integration Marketplace Plan', 'Channel Partner Strategy', 'Alliances Plan'],
    teams: ['the partnerships team', 'the alliances managers', 'the integrations engineers', 'the channel sales team'],
    goals: ['Sign five new technology partners', 'Launch ten integrations in the marketplace', 'Source 15 % of pipeline through partners', 'Certify twenty partner consultants'],
    prose: [
      'Partner-sourced deals close faster and larger, so we give {object} dedicated owners.',
      '{team} holds a quarterly business review with every strategic partner.',
      'Resellers asked for clearer margins, which {object} will finally spell out.',
      'Co-marketing funds for {quarter} go to partners with certified consultants.',
      'Every integration in the marketplace has an owner on both sides and a support path.',
      'Partner tiers reward sourced revenue, certifications and customer satisfaction.',
    ],
    risks: ['Channel conflict with direct sales could stall shared accounts.', 'Integrations built by partners may lag our API changes.', 'Partner enablement takes longer than the program launch allows.'],
    workstreams: [
      {
        heading: 'Partner recruitment',
        verbs: ['recruit', 'sign', 'vet', 'onboard', 'tier'],
        objects: ['the reseller partners', 'the technology alliance agreements', 'the systems integrator shortlist', 'the partner tier criteria', 'the referral partner contracts', 'the partner portal accounts'],
      },
      {
        heading: 'Integrations',
        verbs: ['build', 'certify', 'list', 'maintain', 'co-develop'],
        objects: ['the Salesforce integration', 'the Slack app', 'the marketplace listing', 'the partner API sandbox', 'the HubSpot connector', 'the integration certification checklist'],
      },
      {
        heading: 'Co-selling',
        verbs: ['enable', 'co-market', 'register', 'review', 'fund'],
        objects: ['the partner enablement sessions', 'the deal registration process', 'the co-marketing fund', 'the joint customer case study', 'the partner quarterly business reviews', 'the channel margin structure'],
      },
    ],
    qualifiers: ['with strategic partners', 'for the marketplace launch', 'in the partner portal', 'with the alliances managers', 'for systems integrators', 'to grow partner-sourced pipeline', 'for the reseller channel', 'with the integrations engineers', 'for the DACH region', 'with co-marketing funds'],
  },
  {
    name: 'workplace IT',
    titles: ['Workplace IT Plan', 'Office Move Plan', 'Device Management Rollout', 'Employee Tools Consolidation'],
    teams: ['IT operations', 'the help desk', 'the workplace team', 'facilities'],
    goals: ['Manage every laptop through MDM', 'Move the London office without a day of downtime', 'Cut the number of collaboration tools in half', 'Resolve help desk requests within one day'],
    prose: [
      'New hires wait days for working laptops, so {object} {is} the most visible fix for employees.',
      '{team} handles every request through the help desk portal.',
      'Licences for overlapping tools cost us twice, which {object} will consolidate.',
      'The office move for {quarter} is planned floor by floor with facilities.',
      'Every device is encrypted and enrolled in MDM from the first boot.',
      'Meeting rooms get the same video setup everywhere, including {object}.',
    ],
    risks: ['Hardware shipping delays can leave new hires without laptops.', 'Shadow IT tools hold company data outside our control.', 'The office network cutover could disrupt the support hub.'],
    workstreams: [
      {
        heading: 'Devices',
        verbs: ['enroll', 'image', 'ship', 'encrypt', 'replace'],
        objects: ['the employee laptops', 'the MDM profiles', 'the loaner device pool', 'the conference room displays', 'the office printers', 'the mobile phone fleet'],
      },
      {
        heading: 'Office and network',
        verbs: ['wire', 'install', 'move', 'book', 'survey'],
        objects: ['the London office network', 'the Wi-Fi access points', 'the desk booking system', 'the badge access readers', 'the meeting room video kits', 'the server room equipment'],
      },
      {
        heading: 'Tools and accounts',
        verbs: ['consolidate', 'provision', 'deprovision', 'license', 'migrate'],
        objects: ['the Google Workspace accounts', 'the Slack workspace', 'the Zoom licences', 'the password manager vaults', 'the help desk portal', 'the shared drive permissions'],
      },
    ],
    qualifiers: ['for new hires', 'in the London office', 'with the help desk', 'for remote employees', 'with facilities', 'for the whole company', 'in Jamf', 'for contractors', 'during the office move', 'to cut licence costs'],
  },
];

/** Task owners and plan owners. */
export const OWNERS = ['Priya', 'Marcus', 'Elena', 'Tomás', 'Aiko', 'Dmitri', 'Fatima', 'Jonas', 'Grace', 'Kwame', 'Sofia', 'Liam', 'Mei', 'Rafael'];
/** Month names for due dates. */
export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
