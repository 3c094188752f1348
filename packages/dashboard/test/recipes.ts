import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import express from 'express';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The README's Express recipe, as printed there (`bodyParser` adds an app-wide urlencoded parser before it). */
export function expressApp(handler: Handler, bodyParser = false): express.Express {
  const app = express();
  if (bodyParser) app.use(express.urlencoded({ extended: false }));
  // Express: the handler sees the whole path, so it knows where it lives
  app.use('/admin/taskrow', (req, res) => {
    req.url = req.originalUrl;
    handler(req, res);
  });
  return app;
}

/** The README's Fastify recipe, as printed there; `parser: false` leaves out the content-type parser (Fastify then answers 415). */
export async function fastifyApp(handler: Handler, parser = true): Promise<FastifyInstance> {
  const fastify = Fastify({ forceCloseConnections: true }); // close() ends the browser's kept-alive connections at once
  await fastify.register((app, _options, ready) => {
    if (parser) {
      // the dashboard reads its own forms: leave every body unread in this plugin
      app.removeAllContentTypeParsers();
      app.addContentTypeParser('*', (_req, _body, done) => done(null));
    }
    const route = (req: FastifyRequest, reply: FastifyReply): void => {
      reply.hijack();
      handler(req.raw, reply.raw);
    };
    app.all('/admin/taskrow', route);
    app.all('/admin/taskrow/*', route);
    ready();
  });
  return fastify;
}

/** Listens on a loopback port; resolves to the base URL of the mount and a close function. */
export async function listen(app: express.Express | FastifyInstance): Promise<{ base: string; close(): Promise<void> }> {
  if ('listen' in app && 'register' in app) {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return { base: `${address}/admin/taskrow`, close: () => app.close() };
  }
  const server: Server = await new Promise((resolve) => {
    const s = (app as express.Express).listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as { port: number }).port;
  return {
    base: `http://127.0.0.1:${port}/admin/taskrow`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
