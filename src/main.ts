// The container's entry point (`node dist/main.js`, `npm start`): the service.
import { serve } from './serve.js';

await serve(process.env);
