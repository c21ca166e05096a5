import { type AnalyticsView, columns } from './analytics-view.js';
import { withCtes } from './funnel.js';
import { accountCondition, records, type Scope } from './scope.js';

/** The smallest count of people a cell may show: fewer could identify someone. */
export const SMALLEST_CELL = 5;

/** The EEOC questions, each a key of an eeoc record holding `{id, description}` or null. */
const EEOC_QUESTIONS = ['gender', 'race', 'veteran_status', 'disability_status'];

/** The operator's labels (hiresync.data_demographic_labels) of `kind` for `scope`. */
function labels(scope: Scope, kind: 'question' | 'option'): string {
  return `select account, id, label from hiresync.data_demographic_labels where kind = '${kind}' and (${accountCondition(scope)})`;
}

export const diversityFunnel: AnalyticsView = {
  name: 'diversity_funnel',
  comment: `People (distinct candidates) per answer of each EEOC and demographic question at each step of the funnel (applied, interviewed, offered, hired); a cell of fewer than ${SMALLEST_CELL} people shows null with suppressed true, and so does the next smallest cell of a step where only one was, so that no count can be derived by subtraction.`,
  columns: columns(
    ['source', 'text', "'eeoc' or 'demographic'."],
    [
      'question',
      'text',
      "The question: an EEOC key (gender, race, veteran_status, disability_status), or the demographic question's name, else its local label, else 'question <id>'.",
    ],
    [
      'answer',
      'text',
      "The answer's description or option name (else its local label, else 'option <id>'), or '(not answered)'.",
    ],
    ['step', 'text', "'applied', 'interviewed', 'offered' or 'hired'."],
    ['step_order', 'integer', '1 to 4, in the order of step.'],
    ['people', 'bigint', `Distinct candidates; null when suppressed.`],
    [
      'suppressed',
      'boolean',
      `True when people is hidden (fewer than ${SMALLEST_CELL}, or the complement of such a cell).`,
    ],
  ),
  body: (scope) => `${withCtes(['funnel'], scope)},
    answers as (
      select e.account, hiresync.try_bigint(e.data->'application_id') as application_id,
        'eeoc' as source, q.question,
        coalesce(e.data->q.question->>'description', '(not answered)') as answer
      from (${records('eeoc', scope)}) e
      cross join unnest(array['${EEOC_QUESTIONS.join("', '")}']) as q(question)
      union all
      select d.account, hiresync.try_bigint(d.data->'application_id'), 'demographic',
        coalesce(q.data->>'name', ql.label, 'question ' || hiresync.try_bigint(d.data->'demographic_question_id')),
        case when hiresync.try_bigint(d.data->'demographic_answer_option_id') is null then '(not answered)'
          else coalesce(o.data->>'name', ol.label, 'option ' || hiresync.try_bigint(d.data->'demographic_answer_option_id')) end
      from (${records('demographic_answers', scope)}) d
      left join (${records('demographic_questions', scope)}) q
        on q.account = d.account and q.id = hiresync.try_bigint(d.data->'demographic_question_id')
      left join (${labels(scope, 'question')}) ql
        on ql.account = d.account and ql.id = hiresync.try_bigint(d.data->'demographic_question_id')
      left join (${records('demographic_answer_options', scope)}) o
        on o.account = d.account and o.id = hiresync.try_bigint(d.data->'demographic_answer_option_id')
      left join (${labels(scope, 'option')}) ol
        on ol.account = d.account and ol.id = hiresync.try_bigint(d.data->'demographic_answer_option_id')
    ),
    cells as (
      select x.account, x.source, x.question, x.answer, s.step, s.step_order,
        count(distinct f.candidate_id) as people
      from answers x
      join funnel f on f.account = x.account and f.id = x.application_id
      cross join lateral (values ('applied', 1, true), ('interviewed', 2, f.interviewed),
        ('offered', 3, f.offered), ('hired', 4, f.hired)) as s(step, step_order, reached)
      where s.reached
      group by x.account, x.source, x.question, x.answer, s.step, s.step_order
      having count(distinct f.candidate_id) > 0
    ),
    ranked as (
      select *, people < ${SMALLEST_CELL} as small,
        count(*) filter (where people < ${SMALLEST_CELL}) over step as small_cells,
        count(*) filter (where people >= ${SMALLEST_CELL}) over step as large_cells,
        row_number() over (partition by account, source, question, step
          order by people < ${SMALLEST_CELL}, people, answer collate "C") as rank
      from cells
      window step as (partition by account, source, question, step)
    ),
    marked as (
      select *, small or (small_cells = 1 and large_cells > 0 and rank = 1) as hidden from ranked
    )
    select account, source, question, answer, step, step_order,
      case when hidden then null else people end as people, hidden as suppressed
    from marked`,
};
